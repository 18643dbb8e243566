# Phase 2: a real sweep (sourced by lab.sh). Filled in below.
sweep_run() { die "sweep phase not implemented yet"; }
