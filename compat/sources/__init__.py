"""Static facts from deployment files: Compose and Kubernetes manifests (Dockerfiles: compat.dockerfile)."""
