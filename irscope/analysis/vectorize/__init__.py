"""Why a global access is not vectorized, each reason with its fix."""
