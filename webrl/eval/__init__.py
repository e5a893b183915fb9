"""Reading what runs wrote: the report and trajectory viewer, study tables, archives; and the env,
replay and model benchmarks. Episodes are run by webrl/rollout."""
