"""Coverage: what a case set covers, by slice (tallies, gaps, release-gate counts: `evalconv stats`)."""
