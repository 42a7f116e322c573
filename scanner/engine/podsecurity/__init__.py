"""The ``validate.podSecurity`` sub-rule: the Pod Security Standards levels and controls."""
