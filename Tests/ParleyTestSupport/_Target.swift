// Shared helpers for test targets.
