"""Plots and drawings (plotly): trajectories, paths with forces, moment arms, model sketches."""
from .plotting import plot_path, plot_path_forces, plot_trajectories, short_names

__all__ = ["plot_path", "plot_path_forces", "plot_trajectories", "short_names"]
