"""Manifest renders: items to one audio file each, through one continuous batch, locally or on a
Ray cluster."""
