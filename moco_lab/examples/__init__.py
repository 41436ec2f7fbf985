"""Ready-made studies (``ml.examples``): Moco's verification problems, posed as Moco 4.6 poses them, and the
Moco paper's squat-to-stand predictions."""
from .squat import SQUAT_POSE, squat_to_stand_guess_values, squat_to_stand_study
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

__all__ = ["SQUAT_POSE", "squat_to_stand_guess_values", "squat_to_stand_study",
           "PARABOLA_MOTIONS", "STUDIES", "double_pendulum_study", "linear_study", "parabola_study",
           "sliding_mass_study", "suspended_mass_prediction_study", "suspended_mass_tracking_study"]
