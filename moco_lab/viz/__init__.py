"""Plots and drawings (plotly): trajectories, model outputs, paths with forces, moment arms, model sketches."""
from .plotting import plot_outputs, plot_path, plot_path_forces, plot_trajectories, short_names

__all__ = ["plot_outputs", "plot_path", "plot_path_forces", "plot_trajectories", "short_names"]
