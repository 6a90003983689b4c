// Stats.hpp — counters reported through the `Stats` option.
#ifndef ODEPKG_STATS_HPP
#define ODEPKG_STATS_HPP

namespace odepkg {

struct Stats {
  long steps = 0;              ///< accepted steps
  long rejected = 0;           ///< rejected attempts (error too large or step failure)
  long failed_solves = 0;      ///< step attempts whose nonlinear solve failed
  long field_evals = 0;        ///< calls of f(t, [q; p])
  long hessian_evals = 0;      ///< calls of HamiltonianHessFcn
  long constraint_evals = 0;   ///< calls of ConstraintFcn
  long constraint_grad_evals = 0;  ///< calls of ConstraintGradFcn
  long constraint_hess_evals = 0;  ///< calls of ConstraintHessFcn
  long flow_evals = 0;         ///< calls of ConstraintFlowFcn (the fibre flow exp(s X_g))
  long nonholonomic_evals = 0; ///< calls of NonholonomicFcn (A(q) of A(q) H_p = 0)
  long newton_solves = 0;      ///< nonlinear systems solved
  long newton_iterations = 0;  ///< total Newton iterations
  long newton_max_iterations = 0;  ///< largest iteration count of one solve
  long projection_iterations = 0;  ///< geometric RATTLE: Newton iterations onto M_H (sigma)
  long jacobian_evals = 0;     ///< Jacobians formed (analytic or finite differences)
  long fd_jacobians = 0;       ///< ... of which by finite differences
  long fd_field_jacobians = 0; ///< ... of those, differences of f (H's Hessian or blocks of it)
  long lu_factorizations = 0;  ///< LU decompositions
  long rank_deficient = 0;     ///< rank-deficient multiplier systems met
  long newton_retries = 0;     ///< steps whose constrained solve was retried (globalised Newton, cold starts)
  long distant_roots = 0;      ///< roots rejected as far from the unconstrained step
  double max_constraint_residual = 0.0;  ///< max |g(q)| over the output
  double max_hidden_residual = 0.0;      ///< max |G(q) H_p| (|{g, H}| for g(q, p)) over the output
  double max_nonholonomic_residual = 0.0;  ///< max |A(q) H_p| over the steps (NonholonomicFcn)
  /// Largest estimated error of an entry of a constraint gradient taken by
  /// differences (0 with ConstraintGradFcn): the accuracy of G, and so of
  /// what the method makes of G(q) H_p = 0.
  double max_grad_error = 0.0;

  long user_calls() const {
    return field_evals + hessian_evals + constraint_evals +
           constraint_grad_evals + constraint_hess_evals + flow_evals + nonholonomic_evals;
  }
};

}  // namespace odepkg

#endif
