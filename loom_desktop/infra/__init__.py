"""App plumbing no feature owns: workers, threads, settings, one instance, notices."""
