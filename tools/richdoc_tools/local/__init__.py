"""The embedded stack: template.yaml deployed into an in-process AWS emulation (moto)."""
