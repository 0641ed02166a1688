// The console's shell: sign-in, navigation, the live connection, theme and keyboard shortcuts.
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import "uplot/dist/uPlot.min.css";
import "./style.css";
import { api, ApiError, setToken, token, watch, actingName, setActingName } from "./api.js";
import { useRoute, publishEvent, href } from "./lib.jsx";
import { FleetPage } from "./pages/fleet.jsx";
import { ClusterPage } from "./pages/cluster.jsx";
import { QuotasPage } from "./pages/quotas.jsx";
import { JobsPage, JobPage } from "./pages/jobs.jsx";
import { HealthPage, RemediationPage } from "./pages/health.jsx";
import { BillingPage } from "./pages/billing.jsx";

const NAV = [
  ["fleet", "Fleet", "f"],
  ["quotas", "Quotas", "q"],
  ["jobs", "Jobs", "j"],
  ["health", "Health", "h"],
  ["billing", "Billing", "b"],
];

// What the signed-in identity may do (docs/security.md): buttons follow it; the server decides.
export function abilities(who) {
  const roles = who?.Roles || [];
  const has = (r) => roles.includes(r);
  return {
    operate: has("admin") || has("operator"),
    admin: has("admin"),
    team: roles.some((r) => r.startsWith("team:")),
    subject: who?.Subject || "",
    roles,
  };
}

function SignIn({ onSignedIn, authRequired, error }) {
  const [t, setT] = useState("");
  const [name, setName] = useState(actingName());
  const [err, setErr] = useState(error);
  async function submit(e) {
    e.preventDefault();
    setErr(null);
    if (authRequired) setToken(t.trim());
    else setActingName(name.trim());
    try {
      const w = await api("/v1/whoami");
      if (!w.SignedIn) {
        setToken("");
        setErr(new ApiError(401, "", "That token is not valid here."));
      } else onSignedIn(w);
    } catch (ex) {
      setErr(ex);
    }
  }
  return (
    <main class="signin">
      <h1>gpufleet</h1>
      <form onSubmit={submit}>
        {authRequired ? (
          <label>
            API token
            <input type="password" autocomplete="off" autofocus value={t} onInput={(e) => setT(e.target.value)} placeholder="gf_…" required />
            <small>Kept in this tab's session storage only. Make one with <code>gpufleet token create</code>.</small>
          </label>
        ) : (
          <label>
            Your name
            <input autofocus value={name} onInput={(e) => setName(e.target.value)} placeholder="alice" />
            <small>This server has no auth file (loopback only): every caller is an admin named by itself.</small>
          </label>
        )}
        <button type="submit">Sign in</button>
        {err ? <p class="error" role="alert">{err.message}</p> : null}
      </form>
    </main>
  );
}

function Page({ route, who }) {
  const [first, second] = route.parts;
  const can = abilities(who);
  switch (first) {
    case "fleet":
      return <FleetPage can={can} />;
    case "cluster":
      return <ClusterPage name={second} query={route.query} can={can} />;
    case "quotas":
      return <QuotasPage query={route.query} />;
    case "jobs":
      return <JobsPage query={route.query} />;
    case "job":
      return <JobPage id={second} can={can} />;
    case "health":
      return <HealthPage query={route.query} can={can} />;
    case "remediation":
      return <RemediationPage id={second} can={can} />;
    case "billing":
      return <BillingPage query={route.query} />;
    default:
      return (
        <section>
          <h1>Not found</h1>
          <p>
            No page “{first}”. Go to the <a href="#/fleet">fleet</a>.
          </p>
        </section>
      );
  }
}

function theme() {
  return localStorage.getItem("gpufleet.theme") || (matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light");
}

function App() {
  const route = useRoute();
  const [who, setWho] = useState(null);
  const [auth, setAuth] = useState({ checked: false, required: false, error: null });
  const [live, setLive] = useState("connecting");
  const [mode, setMode] = useState(theme());

  useEffect(() => {
    document.documentElement.dataset.theme = mode;
  }, [mode]);

  useEffect(() => {
    api("/v1/whoami")
      .then((w) => {
        // Without an auth file whoami answers anyone; ask for a name once, to act as.
        const signedIn = w.SignedIn && (w.AuthRequired || actingName());
        if (signedIn) setWho(w);
        const stale = w.AuthRequired && token() && !w.SignedIn;
        setAuth({ checked: true, required: w.AuthRequired, error: stale ? new ApiError(401, "", "The saved token is no longer valid.") : null });
      })
      .catch((e) => setAuth({ checked: true, required: true, error: e }));
  }, []);

  useEffect(() => {
    if (!who) return;
    return watch(publishEvent, setLive);
  }, [who]);

  useEffect(() => {
    let pending = false;
    function key(e) {
      if (e.target.closest("input, textarea, select") || e.ctrlKey || e.metaKey || e.altKey) return;
      if (pending) {
        pending = false;
        const n = NAV.find((x) => x[2] === e.key);
        if (n) location.hash = `#/${n[0]}`;
        return;
      }
      if (e.key === "g") pending = true;
      else if (e.key === "/") {
        const f = document.querySelector("[data-filter]");
        if (f) {
          e.preventDefault();
          f.focus();
        }
      } else if (e.key === "?") document.getElementById("keys")?.toggleAttribute("open");
    }
    addEventListener("keydown", key);
    return () => removeEventListener("keydown", key);
  }, []);

  if (!auth.checked) return <p class="muted">Connecting…</p>;
  if (!who) return <SignIn authRequired={auth.required} error={auth.error} onSignedIn={setWho} />;
  const current = route.parts[0] === "cluster" ? "fleet" : route.parts[0] === "job" ? "jobs" : route.parts[0] === "remediation" ? "health" : route.parts[0];
  function signOut() {
    setToken("");
    setActingName("");
    setWho(null);
  }
  return (
    <>
      <header>
        <a class="brand" href="#/fleet">gpufleet</a>
        <nav aria-label="Pages">
          {NAV.map(([id, label]) => (
            <a href={href([id])} aria-current={current === id ? "page" : undefined}>
              {label}
            </a>
          ))}
        </nav>
        <span class={`live ${live}`} title="The watch stream (GET /v1/watch)">{live === "live" ? "● live" : live}</span>
        <span class="who" title={who.Roles.join(", ")}>
          {who.Subject} <small>({who.Roles.join(", ")})</small>
        </span>
        <button class="ghost" onClick={() => { const m = mode === "dark" ? "light" : "dark"; localStorage.setItem("gpufleet.theme", m); setMode(m); }} aria-label="Toggle dark mode">
          {mode === "dark" ? "☀" : "☾"}
        </button>
        <button class="ghost" onClick={signOut}>Sign out</button>
      </header>
      <main id="main">
        <Page route={route} who={who} />
      </main>
      <details id="keys" class="keys">
        <summary>Keys</summary>
        <p>
          <kbd>g</kbd> then {NAV.map(([, l, k]) => <><kbd>{k}</kbd> {l} </>)} · <kbd>/</kbd> filter · <kbd>Tab</kbd> moves, <kbd>Enter</kbd> opens · <kbd>?</kbd> this help
        </p>
      </details>
    </>
  );
}

render(<App />, document.getElementById("app"));
