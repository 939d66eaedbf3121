"""Probes layer: kinematic tactile probes (ghost sensing spheres fixed on bodies)."""
