// Deck: sizes, card properties, shuffle is a permutation, and dealing takes cards from the END of the order
// (popgym test_deck: 10 single deals equal idx[51:41:-1]).
#include <algorithm>
#include <catch2/catch.hpp>
#include <vector>

#include "envs/popgym/deck.hpp"

using rlm::envs::Rng;
using rlm::envs::popgym::Deck;

TEST_CASE("deck sizes follow num_decks", "[deck]") {
  for (int decks : {1, 2, 8, 16}) {
    Deck deck(decks);
    Rng rng(decks);
    CHECK(deck.num_cards() == 52 * decks);
    CHECK(deck.remaining() == 0);  // nothing to deal before the first reset
    deck.reset(rng);
    CHECK(deck.remaining() == 52 * decks);
    deck.deal();
    CHECK(deck.remaining() == 52 * decks - 1);
    CHECK(deck.num_dealt() == 1);
  }
}

TEST_CASE("deck shuffle is a permutation and depends on the seed", "[deck]") {
  Deck a(2), b(2), c(2);
  Rng ra(1), rb(1), rc(2);
  a.reset(ra);
  b.reset(rb);
  c.reset(rc);
  std::vector<int> sorted(a.order().begin(), a.order().end());
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < 104; ++i) REQUIRE(sorted[static_cast<size_t>(i)] == i);
  CHECK(std::equal(a.order().begin(), a.order().end(), b.order().begin()));
  CHECK_FALSE(std::equal(a.order().begin(), a.order().end(), c.order().begin()));
}

TEST_CASE("deck deals from the end of the order", "[deck]") {
  Deck deck(1);
  Rng rng(42);
  deck.reset(rng);
  const std::vector<int> order(deck.order().begin(), deck.order().end());
  for (int j = 0; j < 10; ++j) CHECK(deck.deal() == order[static_cast<size_t>(51 - j)]);
  // recent(1) is the last dealt card (popgym hand[-1]), recent(10) the first.
  CHECK(deck.recent(1) == order[42]);
  CHECK(deck.recent(10) == order[51]);
  for (int j = 10; j < 52; ++j) deck.deal();
  CHECK(deck.remaining() == 0);
}

TEST_CASE("deck card properties", "[deck]") {
  CHECK(Deck::rank(0) == 0);
  CHECK(Deck::rank(51) == 12);
  CHECK(Deck::rank(52) == 0);  // second deck repeats the first
  CHECK(Deck::suit(5) == 1);
  CHECK(Deck::colour(5) == 1);
  CHECK(Deck::suit(52 + 7) == 3);
  // Each suit appears 13 times per deck.
  std::vector<int> per_suit(4);
  for (int c = 0; c < 52; ++c) ++per_suit[static_cast<size_t>(Deck::suit(c))];
  CHECK(per_suit == std::vector<int>{13, 13, 13, 13});
}
