"""Sources of manifests: Git repositories, directories and cluster exports, with provenance."""
