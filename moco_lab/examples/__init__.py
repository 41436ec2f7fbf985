"""Ready-made studies (``ml.examples``): Moco's verification problems, posed as Moco 4.6 poses them."""
from .verification import (
                           PARABOLA_MOTIONS,
                           STUDIES,
                           double_pendulum_study,
                           linear_study,
                           parabola_study,
                           sliding_mass_study,
                           suspended_mass_prediction_study,
                           suspended_mass_tracking_study,
)

__all__ = ["PARABOLA_MOTIONS", "STUDIES", "double_pendulum_study", "linear_study", "parabola_study",
           "sliding_mass_study", "suspended_mass_prediction_study", "suspended_mass_tracking_study"]
