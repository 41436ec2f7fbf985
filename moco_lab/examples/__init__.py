"""Ready-made studies (``ml.examples``): Moco's verification problems, posed as Moco 4.6 poses them, the
Moco paper's squat-to-stand predictions, gait2d tracking Winter's normal gait, Moco's torque-driven
tracking of a measured walking trial under its ground reaction forces (``gait10dof``), and Moco's 2-D walking
example: tracking, then prediction (``walking_2d``), and Moco's exampleMocoInverse on the 3-D full-body model
(``walking_3d``)."""
from .gait2d import WINTER_JOINTS, WinterGait, gait2d_prediction_study, gait2d_tracking_study, gait2d_walking_guess, winter_gait
from .gait10dof import GAIT10DOF_TRACK_SETTINGS, gait10dof_torque_model, gait10dof_track
from .squat import SQUAT_POSE, squat_to_stand_guess_values, squat_to_stand_study
from .verification import (
                     PARABOLA_MOTIONS,
                     VERIFICATION_STUDIES,
                     double_pendulum_study,
                     linear_study,
                     parabola_study,
                     sliding_mass_study,
                     suspended_mass_prediction_study,
                     suspended_mass_tracking_study,
)
from .walking_2d import (
                     WALKING_2D_BOUNDS,
                     WALKING_2D_METABOLICS,
                     walking_2d_add_metabolics,
                     walking_2d_metabolics,
                     walking_2d_model,
                     walking_2d_prediction,
                     walking_2d_study,
                     walking_2d_symmetry,
                     walking_2d_tracking,
)
from .walking_3d import (
    WALKING_3D_EMG,
    WALKING_3D_INVERSE_SETTINGS,
    walking_3d_emg,
    walking_3d_ik,
    walking_3d_inverse,
    walking_3d_knee_load_results,
    walking_3d_model,
)

__all__ = ["GAIT10DOF_TRACK_SETTINGS", "gait10dof_torque_model", "gait10dof_track",
           "WINTER_JOINTS", "WinterGait", "gait2d_prediction_study", "gait2d_tracking_study", "gait2d_walking_guess",
           "winter_gait",
           "SQUAT_POSE", "squat_to_stand_guess_values", "squat_to_stand_study",
           "PARABOLA_MOTIONS", "VERIFICATION_STUDIES", "double_pendulum_study", "linear_study", "parabola_study",
           "sliding_mass_study", "suspended_mass_prediction_study", "suspended_mass_tracking_study",
           "WALKING_2D_BOUNDS", "walking_2d_model", "walking_2d_prediction", "walking_2d_study", "walking_2d_symmetry",
           "walking_2d_tracking", "walking_2d_metabolics", "walking_2d_add_metabolics", "WALKING_2D_METABOLICS",
           "WALKING_3D_INVERSE_SETTINGS",
           "walking_3d_inverse", "walking_3d_model",
           "WALKING_3D_EMG", "walking_3d_emg", "walking_3d_ik", "walking_3d_knee_load_results"]
