// PhaseSpaceChecks.h — before the first step of geometric SHAKE/RATTLE with
// constraints g(q, p): the assumptions of McLachlan et al. 2014 at the initial data, as
// errors with odepkg: identifiers, and the projection of the data onto M_H.
//
// Declaration only: defined in PhaseSpaceChecks.cc, compiled once into the
// package's oct-file (the projections and Newton iterations under it are
// heavy Eigen code).
#ifndef ODEPKG_BINDING_PHASE_SPACE_CHECKS_H
#define ODEPKG_BINDING_PHASE_SPACE_CHECKS_H

#include "Settings.h"
#include "Stepper.hpp"

namespace odepkg::binding {

/// Checks (and, with `project`, projects onto M_H with a warning or an error
/// as InitialProjection says) the initial data x0 of a geometric RATTLE with
/// g(q, p).  Does nothing for other steppers.
void check_phase_space_data(Stepper& stepper, double t0, Vec& x0, const Settings& s, const char* who,
                            bool project);

}  // namespace odepkg::binding

#endif
