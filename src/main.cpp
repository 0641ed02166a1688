#include "cli/app.h"

int main(int argc, char** argv) { return gf::run_cli(argc, argv); }
