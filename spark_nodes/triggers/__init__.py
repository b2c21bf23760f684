"""Windows triggered by rates and exceptions (ALGORITHMS.md §4, source 001): conditions
(:mod:`.conditions`), windows and their initiator (:mod:`.windows`), and the ``[trigger]``
spec tables that build them (:mod:`.spec`)."""
