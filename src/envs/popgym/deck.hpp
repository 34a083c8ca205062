// A shoe of num_decks shuffled 52-card decks (proroklab/popgym@410d5aa:popgym/core/deck.py). Card ids are fixed:
// rank = (c mod 52) div 4 (0 = Ace .. 12 = King), suit = c mod 4 ([s, d, c, h]), colour = c mod 2 ([black, red]).
#pragma once
#include <cstdint>
#include <numeric>
#include <span>
#include <stdexcept>
#include <vector>

#include "envs/rng.hpp"

namespace rlm::envs::popgym {

class Deck {
 public:
  static constexpr int kCardsPerDeck = 52;
  static constexpr int kNumSuits = 4;

  explicit Deck(int num_decks) : order_(static_cast<size_t>(num_decks * kCardsPerDeck)) {}

  static int rank(int card) { return (card % kCardsPerDeck) / kNumSuits; }
  static int suit(int card) { return card % kNumSuits; }
  static int colour(int card) { return card % 2; }

  int num_cards() const { return static_cast<int>(order_.size()); }
  /// Undealt cards (popgym's len(deck)).
  int remaining() const { return remaining_; }
  /// Cards dealt since reset (the hand, had it never been discarded).
  int num_dealt() const { return num_cards() - remaining_; }

  /// Collects every card and shuffles: order_ becomes a uniform random permutation (numpy's Fisher-Yates order,
  /// i from the top down, j uniform in [0, i]). No allocation.
  void reset(Rng& rng) {
    std::iota(order_.begin(), order_.end(), 0);
    for (int i = num_cards() - 1; i > 0; --i) {
      const auto j = static_cast<int>(rng.uniform_int(static_cast<uint64_t>(i) + 1));
      std::swap(order_[static_cast<size_t>(i)], order_[static_cast<size_t>(j)]);
    }
    remaining_ = num_cards();
  }

  /// Collects every card into the given order (a permutation of 0..N-1), as if reset() had shuffled it so: the golden
  /// replay tests restore the deck popgym recorded. Throws std::invalid_argument if `order` is not a permutation.
  void set_order(std::span<const int> order) {
    if (order.size() != order_.size()) throw std::invalid_argument("Deck::set_order: wrong number of cards");
    std::vector<char> seen(order_.size(), 0);
    for (int c : order) {
      if (c < 0 || c >= num_cards() || seen[static_cast<size_t>(c)])
        throw std::invalid_argument("Deck::set_order: not a permutation");
      seen[static_cast<size_t>(c)] = 1;
    }
    std::copy(order.begin(), order.end(), order_.begin());
    remaining_ = num_cards();
  }

  /// Deals one card from the END of the undealt part, as popgym does (order_[N-1], then order_[N-2], ...).
  /// Precondition: remaining() > 0 (the envs check it; an env that steps past its end is an error there).
  int deal() { return order_[static_cast<size_t>(--remaining_)]; }

  /// The j-th most recently dealt card, j = 1 for the last one (popgym's hand[-j]). Precondition 1 <= j <= num_dealt().
  int recent(int j) const { return order_[static_cast<size_t>(remaining_ + j - 1)]; }

  /// The shuffled order; cards are dealt from its end.
  std::span<const int> order() const { return order_; }

 private:
  std::vector<int> order_;
  int remaining_ = 0;  // a fresh Deck has nothing to deal until reset()
};

}  // namespace rlm::envs::popgym
