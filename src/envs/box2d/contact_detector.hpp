// Gymnasium's ContactDetector, as LunarLander and BipedalWalker both use it: one body whose touching anything ends
// the episode (the lander, the walker's hull), and two legs whose ground-contact flags BeginContact sets and
// EndContact clears. The flags are plain booleans, not counters: a leg sliding from one terrain edge onto the next
// may read 0 until the next BeginContact, which is kept.
#pragma once
#include <box2d/box2d.h>

#include <array>
#include <cstddef>

namespace rlm::envs::box2d {

class ContactDetector final : public b2ContactListener {
 public:
  /// Watches these bodies of a freshly built world, with every flag cleared. Box2D calls the listener only inside
  /// b2World::Step, so the world may be given this listener before its bodies exist.
  void watch(const b2Body* body, std::array<const b2Body*, 2> legs) {
    body_ = body;
    legs_ = legs;
    body_touched_ = false;
    leg_contact_ = {false, false};
  }
  /// The watched body touched something since watch(): game over.
  bool body_touched() const { return body_touched_; }
  bool leg_contact(size_t leg) const { return leg_contact_[leg]; }

  void BeginContact(b2Contact* contact) override {
    const b2Body* a = contact->GetFixtureA()->GetBody();
    const b2Body* b = contact->GetFixtureB()->GetBody();
    if (a == body_ || b == body_) body_touched_ = true;
    set_legs(a, b, true);
  }
  void EndContact(b2Contact* contact) override {
    set_legs(contact->GetFixtureA()->GetBody(), contact->GetFixtureB()->GetBody(), false);
  }

 private:
  void set_legs(const b2Body* a, const b2Body* b, bool touching) {
    for (size_t k = 0; k < 2; ++k)
      if (a == legs_[k] || b == legs_[k]) leg_contact_[k] = touching;
  }

  const b2Body* body_ = nullptr;
  std::array<const b2Body*, 2> legs_{};
  bool body_touched_ = false;
  std::array<bool, 2> leg_contact_{};
};

}  // namespace rlm::envs::box2d
