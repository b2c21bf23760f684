"""Windows triggered by rates and exceptions (docs/ALGORITHMS.md#triggers, source 001): conditions
(:mod:`.conditions`), windows and their initiator (:mod:`.windows`), and the ``[trigger]``
spec tables that build them (:mod:`.spec`)."""
