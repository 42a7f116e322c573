"""The ``validate.manifests`` sub-rule: keyed verification of signed manifests."""
