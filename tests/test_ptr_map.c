/*
 * test_ptr_map.c - the engine's pointer map (ir/ptr_map.h): every key is found after growth,
 * slot_of inserts once and says so, put overwrites, clear empties and keeps the capacity,
 * reserve avoids rehashing, and the load stays under one half.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "ir/err.h"
#include "ir/ptr_map.h"
#include "test_support.h"

START_TEST(a_zeroed_map_is_empty_and_answers_the_default) {
  sp_ptr_map m = {0};
  int x = 0;
  ck_assert_int_eq(sp_ptr_map_get(&m, &x, -7), -7);
  ck_assert_ptr_null(sp_ptr_map_find(&m, &x));
  sp_ptr_map_clear(&m);   /* clearing an empty map is fine */
  sp_ptr_map_free(&m);
}
END_TEST

START_TEST(every_key_is_found_after_the_map_grows) {
  sp_ptr_map m;
  sp_ptr_map_init(&m);
  char *keys = calloc(5000, 1);
  for (int i = 0; i < 5000; i++) {
    ck_assert_int_eq(sp_ptr_map_put(&m, &keys[i], 3 * i), SP_OK);
    ck_assert_uint_lt(2 * m.n, m.cap);            /* load under one half */
    ck_assert_uint_eq(m.cap & (m.cap - 1), 0);    /* a power of two */
  }
  ck_assert_uint_eq(m.n, 5000);
  for (int i = 0; i < 5000; i++) ck_assert_int_eq(sp_ptr_map_get(&m, &keys[i], -1), 3 * i);
  int other = 0;
  ck_assert_int_eq(sp_ptr_map_get(&m, &other, -1), -1);
  sp_ptr_map_free(&m);
  ck_assert_uint_eq(m.cap, 0);
  free(keys);
}
END_TEST

START_TEST(slot_of_inserts_a_key_once_with_the_default) {
  sp_ptr_map m;
  sp_ptr_map_init(&m);
  int a = 0, b = 0;
  bool inserted = false;
  sp_ptr_map_slot *s = sp_ptr_map_slot_of(&m, &a, 10, &inserted);
  ck_assert_ptr_nonnull(s);
  ck_assert(inserted);
  ck_assert_int_eq(s->val, 10);
  s->val = 11;
  s = sp_ptr_map_slot_of(&m, &a, 99, &inserted);
  ck_assert(!inserted);
  ck_assert_int_eq(s->val, 11);             /* the default does not overwrite */
  /* Numbering in order of first sight, as the module hash does. */
  ck_assert_int_eq(sp_ptr_map_slot_of(&m, &b, (intptr_t)m.n, NULL)->val, 1);
  ck_assert_int_eq(sp_ptr_map_slot_of(&m, &b, (intptr_t)m.n, NULL)->val, 1);
  ck_assert_uint_eq(m.n, 2);
  sp_ptr_map_free(&m);
}
END_TEST

START_TEST(put_overwrites_without_adding) {
  sp_ptr_map m;
  sp_ptr_map_init(&m);
  int a = 0;
  ck_assert_int_eq(sp_ptr_map_put(&m, &a, 1), SP_OK);
  ck_assert_int_eq(sp_ptr_map_put(&m, &a, 2), SP_OK);
  ck_assert_uint_eq(m.n, 1);
  ck_assert_int_eq(sp_ptr_map_get(&m, &a, 0), 2);
  ck_assert_int_eq(sp_ptr_map_find(&m, &a)->val, 2);
  sp_ptr_map_free(&m);
}
END_TEST

START_TEST(clear_empties_the_map_and_keeps_its_capacity) {
  sp_ptr_map m;
  sp_ptr_map_init(&m);
  char keys[100] = {0};
  for (int i = 0; i < 100; i++) ck_assert_int_eq(sp_ptr_map_put(&m, &keys[i], i), SP_OK);
  size_t cap = m.cap;
  sp_ptr_map_slot *slots = m.slots;
  sp_ptr_map_clear(&m);
  ck_assert_uint_eq(m.n, 0);
  ck_assert_uint_eq(m.cap, cap);
  ck_assert_ptr_eq(m.slots, slots);
  for (int i = 0; i < 100; i++) ck_assert_int_eq(sp_ptr_map_get(&m, &keys[i], -1), -1);
  ck_assert_int_eq(sp_ptr_map_put(&m, &keys[5], 50), SP_OK);
  ck_assert_int_eq(sp_ptr_map_get(&m, &keys[5], -1), 50);
  sp_ptr_map_free(&m);
}
END_TEST

START_TEST(reserve_makes_room_so_insertions_do_not_rehash) {
  sp_ptr_map m;
  sp_ptr_map_init(&m);
  ck_assert_int_eq(sp_ptr_map_reserve(&m, 1000), SP_OK);
  size_t cap = m.cap;
  ck_assert_uint_ge(cap, 2002);
  sp_ptr_map_slot *slots = m.slots;
  char keys[1000] = {0};
  for (int i = 0; i < 1000; i++) ck_assert_int_eq(sp_ptr_map_put(&m, &keys[i], i), SP_OK);
  ck_assert_ptr_eq(m.slots, slots);
  ck_assert_uint_eq(m.cap, cap);
  ck_assert_int_eq(sp_ptr_map_reserve(&m, 10), SP_OK);   /* never shrinks */
  ck_assert_uint_eq(m.cap, cap);
  for (int i = 0; i < 1000; i++) ck_assert_int_eq(sp_ptr_map_get(&m, &keys[i], -1), i);
  sp_ptr_map_free(&m);
}
END_TEST

static Suite *ptr_map_suite(void) {
  Suite *s = suite_create("ptr_map");
  TCase *tc = tcase_create("ptr_map");
  tcase_add_test(tc, a_zeroed_map_is_empty_and_answers_the_default);
  tcase_add_test(tc, every_key_is_found_after_the_map_grows);
  tcase_add_test(tc, slot_of_inserts_a_key_once_with_the_default);
  tcase_add_test(tc, put_overwrites_without_adding);
  tcase_add_test(tc, clear_empties_the_map_and_keeps_its_capacity);
  tcase_add_test(tc, reserve_makes_room_so_insertions_do_not_rehash);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(ptr_map_suite()); }
