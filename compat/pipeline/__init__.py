"""The pipeline: one module per flow that runs the stages in order (facts → resolve → fixes → document)."""
