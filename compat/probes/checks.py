"""The doctor's checks moved to compat.checks (one module per subject, one registry); this name stays for
callers that import `doctor_checks` from here."""

from __future__ import annotations

from compat.checks.doctor import DOCTOR_CHECK_IDS, DOCTOR_ORDER, doctor_checks

__all__ = ["DOCTOR_CHECK_IDS", "DOCTOR_ORDER", "doctor_checks"]
