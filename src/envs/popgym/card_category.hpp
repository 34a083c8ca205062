// What a card game counts or matches: a card's colour, suit or rank (popgym's deck_type "colors"/"suits"/"ranks",
// popgym/core/deck.py). Shared by CountRecall and Concentration.
#pragma once
#include <string_view>

#include "envs/popgym/deck.hpp"

namespace rlm::envs::popgym {

enum class CardCategory { Colors, Suits, Ranks };

/// Number of distinct values: 2 colours, 4 suits, 13 ranks (popgym's len(np.unique(deck_type))).
constexpr int num_categories(CardCategory c) {
  return c == CardCategory::Colors ? 2 : c == CardCategory::Suits ? Deck::kNumSuits : 13;
}

/// The category index of a card id (popgym's colors_idx / suits_idx / ranks_idx).
inline int card_category(CardCategory c, int card) {
  return c == CardCategory::Colors  ? Deck::colour(card)
         : c == CardCategory::Suits ? Deck::suit(card)
                                    : Deck::rank(card);
}

/// popgym's spelling, for messages.
constexpr std::string_view category_name(CardCategory c) {
  return c == CardCategory::Colors ? "colors" : c == CardCategory::Suits ? "suits" : "ranks";
}

}  // namespace rlm::envs::popgym
