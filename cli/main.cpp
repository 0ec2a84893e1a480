#include "cli/app.hpp"

int main(int argc, char** argv) { return gpudict::run_cli(argc, argv); }
