"""Ready-made studies (``ml.examples``): Moco's verification problems, posed as Moco 4.6 poses them, the
Moco paper's squat-to-stand predictions, and gait2d tracking Winter's normal gait."""
from .gait2d import WINTER_JOINTS, WinterGait, gait2d_tracking_study, gait2d_walking_guess, winter_gait
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

__all__ = ["WINTER_JOINTS", "WinterGait", "gait2d_tracking_study", "gait2d_walking_guess", "winter_gait",
           "SQUAT_POSE", "squat_to_stand_guess_values", "squat_to_stand_study",
           "PARABOLA_MOTIONS", "STUDIES", "double_pendulum_study", "linear_study", "parabola_study",
           "sliding_mass_study", "suspended_mass_prediction_study", "suspended_mass_tracking_study"]
