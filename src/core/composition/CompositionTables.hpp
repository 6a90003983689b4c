// CompositionTables.hpp — weights of symmetric composition methods
//   Psi_h = Phi_{g_s h} o ... o Phi_{g_1 h},  g_i = g_{s+1-i},  sum g_i = 1,
// which raise a symmetric one-step map Phi of order 2 to order p while keeping
// it symplectic (if Phi is) and symmetric (Hairer, Lubich, Wanner, "Geometric
// Numerical Integration", 2nd ed., Sect. II.4 and V.3; the order conditions
// for symmetric compositions of symmetric methods are those of Sect. V.3.2).
//
// Every weight is given in full (palindromic) so that a table is checked as
// it is used.  Literals carry 25-30 digits; the compiler rounds them to the
// nearest double.  Closed forms (triple jump, Suzuki's fractal, the central
// weights fixed by sum g_i = 1) were evaluated in 40-digit arithmetic, and
// every table was checked there: sum g_i - 1 and the odd power sums
// sum g_i^{2k+1}, 2k+1 < p, are below 1e-25.
//
// Sources (the weights as printed there, cross-checked against HLW
// Sect. V.3.2 and independent transcriptions in public code):
//  - TripleJump4: Yoshida, "Construction of higher order symplectic
//    integrators", Phys. Lett. A 150 (1990); Suzuki, "Fractal decomposition
//    of exponential operators ...", Phys. Lett. A 146 (1990);
//    g_1 = g_3 = 1/(2 - 2^{1/3}), g_2 = -2^{1/3}/(2 - 2^{1/3})  (HLW Sect. II.4).
//  - Suzuki4: Suzuki (1990), the 5-stage fractal
//    g_{1,2,4,5} = 1/(4 - 4^{1/3}), g_3 = -4^{1/3}/(4 - 4^{1/3})  (HLW Sect. II.4).
//  - McLachlan4: McLachlan, "On the numerical integration of ordinary
//    differential equations by symmetric composition methods", SIAM J. Sci.
//    Comput. 16 (1995): s = 5, g_1 = 0.28, g_2 the root of
//    2 g_1^3 + 2 g_2^3 + (1 - 2 g_1 - 2 g_2)^3 = 0 near 0.6255 (a small error
//    constant).
//  - Yoshida6: Yoshida (1990), solution A of order 6, s = 7.
//  - KahanLi6, KahanLi8: Kahan, Li, "Composition constants for raising the
//    orders of unconventional schemes for ordinary differential equations",
//    Math. Comp. 66 (1997): s = 9 order 6, s = 17 order 8.
//  - McLachlan8: McLachlan (1995), s = 15 order 8.
//  - SofroniouSpaletta10: Sofroniou, Spaletta, "Derivation of symmetric
//    composition constants for symmetric integrators", Optim. Methods Softw.
//    20 (2005): s = 35 order 10.
#ifndef ODEPKG_COMPOSITION_TABLES_HPP
#define ODEPKG_COMPOSITION_TABLES_HPP

#include <cstring>
#include <string>

namespace odepkg::composition {

struct CompositionTable {
  const char* name;
  int order;             ///< of the composition of a symmetric order-2 map
  int stages;            ///< s
  const double* weights; ///< g_1 .. g_s
  const char* reference;
};

namespace detail {

inline constexpr double kTripleJump4[] = {
    1.351207191959657634047687808971460827, -1.702414383919315268095375617942921654,
    1.351207191959657634047687808971460827};

inline constexpr double kSuzuki4[] = {
    0.4144907717943757371423540628607614957, 0.4144907717943757371423540628607614957,
    -0.6579630871775029485694162514430459828, 0.4144907717943757371423540628607614957,
    0.4144907717943757371423540628607614957};

inline constexpr double kMcLachlan4[] = {
    0.28, 0.6254664284676700450123389054926490129, -0.8109328569353400900246778109852980258,
    0.6254664284676700450123389054926490129, 0.28};

inline constexpr double kYoshida6[] = {
    0.78451361047755726381949763, 0.23557321335935813368479318, -1.17767998417887100694641568,
    1.31518632068391121888424974,  // 1 - 2 (g_1 + g_2 + g_3)
    -1.17767998417887100694641568, 0.23557321335935813368479318, 0.78451361047755726381949763};

inline constexpr double kKahanLi6[] = {
    0.39216144400731413927925056, 0.33259913678935943859974864, -0.70624617255763935980996482,
    0.08221359629355080023149045, 0.79854399093482996339895035, 0.08221359629355080023149045,
    -0.70624617255763935980996482, 0.33259913678935943859974864, 0.39216144400731413927925056};

inline constexpr double kMcLachlan8[] = {
    0.74167036435061295344822780, -0.40910082580003159399730010, 0.19075471029623837995387626,
    -0.57386247111608226665638773, 0.29906418130365592384446354, 0.33462491824529818378495798,
    0.31529309239676659663205666, -0.79688793935291635401978884, 0.31529309239676659663205666,
    0.33462491824529818378495798, 0.29906418130365592384446354, -0.57386247111608226665638773,
    0.19075471029623837995387626, -0.40910082580003159399730010, 0.74167036435061295344822780};

inline constexpr double kKahanLi8[] = {
    0.13020248308889008087881763, 0.56116298177510838456196441, -0.38947496264484728640807860,
    0.15884190655515560089621075, -0.39590389413323757733623154, 0.18453964097831570709183254,
    0.25837438768632204729397911, 0.29501172360931029887096624, -0.60550853383003451169892108,
    0.29501172360931029887096624, 0.25837438768632204729397911, 0.18453964097831570709183254,
    -0.39590389413323757733623154, 0.15884190655515560089621075, -0.38947496264484728640807860,
    0.56116298177510838456196441, 0.13020248308889008087881763};

inline constexpr double kSofroniouSpaletta10[] = {
    0.07879572252168641926390768, 0.31309610341510852776481247, 0.02791838323507806610952027,
    -0.22959284159390709415121340, 0.13096206107716486317465686, -0.26973340565451071434460973,
    0.07497334315589143566613711, 0.11199342399981020488957508, 0.36613344954622675119314812,
    -0.39910563013603589787862981, 0.10308739852747107731580277, 0.41143087395589023782070412,
    -0.00486636058313526176219566, -0.39203335370863990644808194, 0.05194250296244964703718290,
    0.05066509075992449633587434, 0.04967437063972987905456880, 0.04931773575959453791768001,
    0.04967437063972987905456880, 0.05066509075992449633587434, 0.05194250296244964703718290,
    -0.39203335370863990644808194, -0.00486636058313526176219566, 0.41143087395589023782070412,
    0.10308739852747107731580277, -0.39910563013603589787862981, 0.36613344954622675119314812,
    0.11199342399981020488957508, 0.07497334315589143566613711, -0.26973340565451071434460973,
    0.13096206107716486317465686, -0.22959284159390709415121340, 0.02791838323507806610952027,
    0.31309610341510852776481247, 0.07879572252168641926390768};

template <int N>
constexpr int count(const double (&)[N]) {
  return N;
}

inline constexpr CompositionTable kTables[] = {
    {"TripleJump4", 4, count(kTripleJump4), kTripleJump4,
     "Yoshida (1990), Suzuki (1990): the triple jump"},
    {"Suzuki4", 4, count(kSuzuki4), kSuzuki4, "Suzuki (1990): the 5-stage fractal"},
    {"McLachlan4", 4, count(kMcLachlan4), kMcLachlan4, "McLachlan (1995): s = 5, order 4"},
    {"Yoshida6", 6, count(kYoshida6), kYoshida6, "Yoshida (1990): solution A, s = 7, order 6"},
    {"KahanLi6", 6, count(kKahanLi6), kKahanLi6, "Kahan, Li (1997): s = 9, order 6"},
    {"McLachlan8", 8, count(kMcLachlan8), kMcLachlan8, "McLachlan (1995): s = 15, order 8"},
    {"KahanLi8", 8, count(kKahanLi8), kKahanLi8, "Kahan, Li (1997): s = 17, order 8"},
    {"SofroniouSpaletta10", 10, count(kSofroniouSpaletta10), kSofroniouSpaletta10,
     "Sofroniou, Spaletta (2005): s = 35, order 10"},
};

}  // namespace detail

/// Number of tables and the i-th one.
inline constexpr int composition_table_count() {
  return static_cast<int>(sizeof(detail::kTables) / sizeof(detail::kTables[0]));
}
inline const CompositionTable& composition_table(int i) { return detail::kTables[i]; }

/// The table of that name (exact, case-sensitive), or null.
inline const CompositionTable* find_composition(const std::string& name) {
  for (const CompositionTable& t : detail::kTables)
    if (name == t.name) return &t;
  return nullptr;
}

/// The recommended table of that order (4, 6, 8, 10; HLW Sect. V.3.2 compare
/// them: more stages with smaller weights pay off), or null.
inline const CompositionTable* recommended_composition(int order) {
  switch (order) {
    case 4: return find_composition("McLachlan4");
    case 6: return find_composition("KahanLi6");
    case 8: return find_composition("KahanLi8");
    case 10: return find_composition("SofroniouSpaletta10");
    default: return nullptr;
  }
}

/// "TripleJump4, Suzuki4, ..." for messages.
inline std::string composition_names() {
  std::string s;
  for (const CompositionTable& t : detail::kTables) s += (s.empty() ? "" : ", ") + std::string(t.name);
  return s;
}

}  // namespace odepkg::composition

#endif
