//! The integration tests: one test crate (`cargo test --release --test integration`),
//! one module per subject, so that the shared oracles and helpers are compiled and
//! the test binary linked once rather than once per file. A subject's tests run
//! alone with its module path as the filter, e.g.
//! `cargo test --release --test integration distributed::`.

// Shared by the subjects below: the independent oracles and the helpers that drive
// the real binary.
mod harness;
mod http;
mod interrupt;
mod module_graph;
mod morris_oracle;
mod oracle;
mod screens;
mod transforms;

// The subjects.
mod bad_input;
mod chains_oracle;
mod conventions;
mod distributed;
mod fuzz;
mod golden;
mod legacy;
mod loony;
mod morris;
mod morris_lasker_oracle;
mod morris_morabaraba_oracle;
mod morris_oracle_selftest;
mod morris_placement;
mod morris_six_oracle;
mod morris_ultra;
mod oracle_boards;
mod oracle_layouts;
mod oracle_random;
mod oracle_selftest;
mod orbits;
mod play;
mod qubic_forged;
mod qubic_oracle;
mod qubic_strategy;
mod recode;
mod reliability;
mod search_cli;
mod search_oracle;
mod search_store;
mod search_symmetry;
mod serve;
mod serve_hostile;
mod tampered;
mod web;
