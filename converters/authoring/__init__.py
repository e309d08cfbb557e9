"""Authoring: making and importing case sets (starter sets from packs, a team's own sheets,
dataset sheets, the admissibility explanation, the packs page)."""
