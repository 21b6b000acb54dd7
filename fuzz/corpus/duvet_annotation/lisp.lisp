;;= https://example.com/spec.md#eval
;;# Forms MUST be evaluated left to right.
(defun f ())
