"""What the tests share: example envs, reference rules, a local Hub server, the scheduler of test files."""
