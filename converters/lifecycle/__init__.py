"""A set that lives in git: review a change (`diff`), retire a case with its history (`retire`),
migrate the case-profile schema (`migrate`). One module per job."""
