// Releases and update checks (issue 7).
