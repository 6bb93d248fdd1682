package io.kvrouter.tracker.policy;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.RecordComponent;

/**
 * Parameters of kvrouter's policy ({@code kvrouter}, {@link TtftPolicy}).
 *
 * @param chunkTokens the engines' prefill chunk ({@code max_num_batched_tokens}, vLLM's default
 *     8,192 for online serving): tokens computed per pass
 * @param fitTiming fit the engines' timing online from observed first tokens; off keeps the prior
 *     ({@link EngineTiming#MOCKER})
 * @param fitForgetting forgetting factor of the fit (0.999: an observation's weight halves after
 *     about 700 newer ones)
 * @param concurrency how concurrent decisions on different routers are made to diverge: {@code off}
 *     (each router alone), {@code random} (near-ties drawn at random), {@code turns} (near-ties
 *     resolved by each router's turn), {@code unseen} (turns, plus the load the peers deciding now
 *     are expected to place ahead of this router's turn), {@code own} (the default since 2 Dec
 *     2026: turns, except that a request no replica holds any of goes to the near-tie holding the
 *     fewest of this router's own requests, equals in hash order from this router's own starting
 *     point, its ties found without the peers' recent reservations; see {@link TtftPolicy}). {@code
 *     own} against {@code turns}: {@code HerdingBurstIT} (4 ingresses, 8 replicas, 24 unique
 *     prompts at once) max ÷ mean 1.00 in five bursts of five against 1.33-2.00; the lab's
 *     conversation trace (first 3,000 requests, 8 replicas × 65,536 blocks, 5 ms, as recorded) 557
 *     / 673 / 724 ms p90 at 1 / 8 / 16 routers either way, as its prompts all share a cached prefix
 *     somewhere. Applied to every request, not only cold ones, it gave 749 and 834 ms there, and to
 *     requests every candidate holds equally much of 730 and 754 ms: among cached candidates, the
 *     least recently written replica is the better tie. Measured in the lab (conversation trace,
 *     first 3,000 requests, 8 replicas × 65,536 blocks, 8 routers, 5 ms, as recorded): p90 TTFT off
 *     1,475 ms, random 846, unseen 846, turns 780 (1 router: 554-562)
 * @param workWeight weight of the compute time the request's own uncached tokens take from the
 *     replica (and so from the requests after it) added to its predicted TTFT: 0 is purely myopic
 *     (recomputing a shared prefix elsewhere looks free when it is as fast as queueing behind it);
 *     1 (the default) led 0 and 2 in the lab: sglang-gsp p90 895 ms / hit 0.853 against 1,235 /
 *     0.800 at 0, conversation (3,000 requests) 557 / 0.260 against 561 / 0.241; with the engines
 *     caching blocks when they schedule them (as vLLM, 2 Dec 2026) sglang-gsp 710 / 0.882 at 1 and
 *     2 against 930 / 0.840 at 0
 * @param tieMillis predicted TTFTs within this many milliseconds of the best are near-ties
 * @param tieRelative predicted TTFTs within this fraction of the best are near-ties
 * @param rotationMillis routers' turns rotate this often (their shared clock)
 * @param horizonMillis a peer not heard from for this long is no longer counted
 * @param maxDelayMillis the largest propagation delay believed (clock skew beyond is ignored)
 * @param workShare exponent of a replica's share of the recently written tokens that scales its
 *     work term, capped at 1 (only a replica written less than the mean is discounted); 0, the
 *     default, is off. Measured in the lab (8 replicas × 65,536 blocks, 1 router; p90 TTFT ms /
 *     hit, off against 1): multi-turn-chat 41 / 0.841 against 37 / 0.836 (off sends every session
 *     to the replica holding the shared system prompt, load max/mean 8.0), mooncake-synthetic 525 /
 *     0.540 against 511 / 0.543, llmd-b2b 56 / 0.983 both, conversation recorded 504 / 0.260
 *     against 503 / 0.258 and spread 468 / 0.267 against 473 / 0.265, but sglang-gsp 895 / 0.853
 *     against 931 / 0.843, and 8 routers 5 ms apart (conversation, first 3,000 requests) 743 /
 *     0.262 against 1,089 / 0.261, as every router discounts the same less-written replica at once:
 *     not the default until it holds there; compare it as {@code kvrouter@workShare=1}
 * @param stripe under {@code turns} and {@code unseen}, when the near-ties outnumber the routers:
 *     they are found and ordered on the view every router shares (this router's own reservations of
 *     the last propagation delay taken out, {@link OwnUnseen}), and this router's m-th decision not
 *     yet seen by its peers takes position {@code (turn + routers · m) mod ties}, so routers
 *     deciding at once stripe over the ties instead of colliding; otherwise, and off, position
 *     {@code turn} on this router's own view (the former rule; the default). Measured in {@code
 *     HerdingBurstIT} (4 ingresses, 8 replicas, 1 Dec 2026): max ÷ mean 3.00, 2.67, 1.67, 1.67,
 *     2.00 on (load average 3-14) against 1.33, 1.67, 1.67, 1.33, 1.33 off (load average 7-13);
 *     1.33, 1.33, 1.33 on against 1.67, 1.33, 2.00 off at load average 20-27. The routers' views of
 *     which reservations the others have seen differ by more than one delay, so their stripes
 *     overlap. In the lab (8 replicas) the routers are never fewer than the ties at 8 or 16
 *     routers, so it changes nothing there
 * @param strictFirst strict mode (the decision is {@link RouteQuery#gated()}): of the near-ties,
 *     the first by fewest requests in flight, then fewest tokens recently written, whatever the
 *     router's turn; off: the turn rule as in broadcast. Broadcast never orders by requests in
 *     flight: in the lab (conversation, 3,000 requests, 8 × 65,536 blocks, 5 ms, as recorded) that
 *     gave 1 router 562 ms / hit 0.253 against 557 / 0.260
 * @param delayPriorMillis how long an own decision counts as unseen by the peers before any
 *     propagation delay was observed (the first burst after start); then the observed delay ({@link
 *     PeerConcurrency#unseenWindowMillis}), which the lab's propagation delay sets alike
 * @param unseenBand among several routers (ungated), the near-tie band is at least this many
 *     typical requests' compute time: a candidate worse than the best by less than one unseen peer
 *     decision would add there is as good under that uncertainty; 0 is off. Measured in the lab (as
 *     above, p90 TTFT ms / hit at 8 and 16 routers): 0 743 / 0.262 and 765 / 0.264, 0.5 754 / 0.250
 *     (8), 1 673 / 0.262 and 724 / 0.261, 2 683 / 0.258 and 748 / 0.259, 4 710 / 0.254 and 788 /
 *     0.248; 1 router unchanged (557 / 0.260 recorded, 528 / 0.260 spread)
 * @param prefillProgress count of the prefill queued on a replica only what the replica has not had
 *     the time to compute yet ({@link PrefillProgress}); off, the default, counts all of it until
 *     the first token, which overstates the wait behind a long prompt in progress. Measured in the
 *     lab (8 replicas × 65,536 blocks, 1 Dec 2026; p90 TTFT ms / hit, off against on): one router,
 *     conversation as recorded 504 / 0.260 both (its arrivals come in 3 s ticks, so no prompt is in
 *     progress when the next ones are placed), spread 468 / 0.267 against 471 / 0.270,
 *     mooncake-synthetic 525 / 0.540 against 525 / 0.543, llmd-b2b 56 / 0.983 against 57 / 0.983,
 *     sglang-gsp and multi-turn-chat unchanged; but 8 and 16 routers 5 ms apart (first 3,000
 *     requests, as recorded) 673 / 0.262 and 724 / 0.261 against 706 / 0.257 and 771 / 0.255: every
 *     router discounts the same replica's queue at once. Compare it as {@code
 *     kvrouter@prefillProgress=true}
 * @param blindMillis under {@code own}: the peers' reservations decided within the last this many
 *     milliseconds (or two late propagation delays, {@link PeerConcurrency#lateDelayMillis}, if
 *     longer) are left out of the near-ties, as some routers have them and others not yet
 * @param holdFromMillis among several routers, ungated: a request whose uncached prefill takes at
 *     least this long on its best replica waits before it is decided ({@link DecisionHold}), so
 *     that the smaller requests other routers place at the same instant reach this router first and
 *     it does not queue behind them, nor they behind it unseen; 0 is off. Measured in the lab
 *     (conversation trace, 8 replicas × 65,536 blocks, 5 ms, as recorded; p90 TTFT ms at 1 / 8 / 16
 *     routers, 2 Dec 2026): first 3,000 requests 557 / 601 / 608 against 557 / 673 / 724 off, all
 *     12,031 506 / 563 / 571 against 506 / 640 / 697; hit rates unchanged (0.26-0.27). With
 *     arrivals spread over their ticks it costs 1-2 %: 483 / 484 against 474 / 480 (whole trace).
 *     While requests come in bursts the hold starts lower, at {@code burstHoldFromMillis}. A lone
 *     router holds from here too, {@code soloHoldMillis} per class
 * @param holdClasses size classes that wait: a request taking {@code holdFromMillis × 2^(c-1)} or
 *     more (up to {@code c = holdClasses}) waits {@code c} steps, so each class sees the smaller
 *     ones' decisions
 * @param holdStep one step of the wait, in late propagation delays ({@link
 *     PeerConcurrency#lateDelayMillis}): above 1, so that a smaller class's reservation has arrived
 * @param holdMaxMillis the longest wait, whatever the observed delay (clock skew between hosts
 *     inflates it); well under the ingress's tracker ask timeout
 * @param sessionShare {@code workShare}'s exponent for a request that opens a session (a session
 *     key no replica is bound to yet, {@link RouteQuery#opensSession()}) and finds part of its
 *     prompt cached somewhere (a system prompt other conversations share): the replica it lands on
 *     also gets the session's later turns, which follow their own cache there, so the work it
 *     brings is charged by the replica's share of recent writes, as under {@code workShare}; other
 *     requests keep {@code workShare}. 0 is off. Measured in the lab (8 replicas × 65,536 blocks, 1
 *     router, 2 Dec 2026; p90 TTFT ms / hit, off against 1): multi-turn-chat 41 / 0.841 against 37
 *     / 0.839 (load max/mean 8.0 against 3.5: off sends every session to the replica holding the
 *     shared system prompt); sglang-gsp 895 / 0.853 (710 / 0.882 with the engines caching blocks
 *     when they schedule them, either way) and llmd-b2b 56 / 0.983 unchanged, as each of their
 *     groups opens with a prompt nothing holds yet (applied to those too, sglang-gsp gave 931 /
 *     0.849); workloads without sessions (the Mooncake traces) unchanged
 * @param sessionWork the work term of a request that opens a session and finds part of its prompt
 *     cached somewhere (as for {@code sessionShare}) counts this many times: the replica it lands
 *     on gets the session's later turns too, and with them more of the work than the opening's own
 *     tokens. 1.5: measured in the lab (8 replicas × 65,536 blocks, 1 router, 3 Dec 2026, p90 TTFT
 *     ms / hit over seeds 1-5): multi-turn-chat 36.75 / 0.8368 mean against 37.70 / 0.8394 at 1,
 *     below tgi_trie (37.55) at every seed and within 0.0043 of the best hit rate (llmd_precise); 2
 *     and 3 give 36.45 and 36.13 but 0.0056 and more below the best hit rate. At 8 routers, 5 ms,
 *     seeds 1 and 2: 39.11 and 36.74 against 39.11 and 37.88. llmd-b2b, sglang-gsp, the Mooncake
 *     traces and the conversation trace (with a CPU tier too) unchanged: their openings find
 *     nothing cached, or they have no sessions. The same gain through {@code workWeight} 1.5, which
 *     weighs every request, cost the conversation trace 468 → 483 ms spread and 546.6 → 562.9 with
 *     a CPU tier
 * @param soloHoldMillis a lone router (no peer heard from), ungated: a request whose uncached
 *     prefill takes at least {@code holdFromMillis} waits this many milliseconds per size class
 *     ({@link DecisionHold} with one step of this length), so that of the requests that reached the
 *     router in the same instant the smaller ones are decided first, on their cache, and the long
 *     ones, which have the least cached anywhere, go where they delay none of them; 0 is off.
 *     Without it, a burst's short request decided after a long one dodges the long one's queue by
 *     leaving its cache. Measured in the lab (8 replicas × 65,536 blocks, 1 router, 2 Dec 2026; p90
 *     TTFT ms / hit, 0 against 1): conversation as recorded 504 / 0.260 against 503 / 0.267, spread
 *     468 / 0.267 against 473 / 0.265 (no two requests share an instant there, so the wait is pure
 *     cost), mooncake-synthetic 525 / 0.540 against 515 / 0.544; llmd-b2b, multi-turn-chat and
 *     sglang-gsp unchanged. The hit rate gains on every window of the conversation trace; the p90
 *     moves both ways (first 3,000 requests 556 against 575, 9,000 510 against 507)
 * @param burstHoldFromMillis among several routers, ungated, while requests come in bursts (see
 *     {@code burstConcurrency}): the hold starts from this prefill instead of {@code
 *     holdFromMillis} (its classes doubling from here), so that in a burst whose requests reach the
 *     routers a few milliseconds apart rather than at one instant the mid-sized prompts also wait
 *     for the shorter ones; 0 is off. With smooth traffic the wait would be pure cost, so it
 *     applies only in bursts. Measured in the lab before {@code burstHoldStep} (conversation trace,
 *     all 12,031 requests, 8 replicas × 65,536 blocks, 8 routers 5 ms apart, 4 Dec 2026; p90 TTFT
 *     ms, against 0): as recorded 511 against 496, every arrival moved by up to 2 ms ({@code
 *     --jitter-ms 2}, seed 1) 530 against 548 (one router: 509), spread over the ticks 473.6 either
 *     way (no burst detected). 75 gave 520 / 526 / 473.6; the same thresholds applied whatever the
 *     traffic (a fixed {@code holdFromMillis}) gave 521 / 525 / 488 at 75 and 512 / 528 / 482 at
 *     150, the spread arrivals paying 1-3 %. A longer intents wait instead (3 or 6 ms more) gave
 *     539-546 under the jitter: what counts is the order by size, not the length of the wait
 * @param burstHoldStep one step of the wait while requests come in bursts, in late propagation
 *     delays, instead of {@code holdStep}: a burst's requests reach the routers up to a few
 *     milliseconds apart, and a class must wait for the reservations of the smaller ones decided
 *     that much later. Measured in the lab (as for {@code burstHoldFromMillis}; 8 routers, p90 TTFT
 *     ms, 2 against 1.2, both with the 150 ms threshold): 2 ms jitter, seeds 1 / 2 / 3, 520 / 520 /
 *     522 against 530 / 531 / 528 (one router 509 / 513 / 513); 5 ms jitter 522 against 541 (one
 *     router 507); as recorded 517 against 511. Applied also to smooth traffic it cost the spread
 *     arrivals 479 against 474, so it applies only in bursts; 3 gave 526-529
 * @param burstConcurrency requests come in bursts while this router's decisions have each been met,
 *     on average, by at least this many peer decisions within one propagation delay ({@link
 *     PeerConcurrency#concurrentMean}, a running mean over its settled decisions): near 0 for
 *     smooth traffic (the conversation trace spread over its ticks brings about 3.3 requests a
 *     second, so about 0.03 within ± 5 ms), one or more when a burst reaches every router at once
 *     (its ticks bring about 10 requests within a few milliseconds)
 * @param coldLeadFromMillis among several routers, ungated: a prompt no replica holds any of, whose
 *     prefill takes at least this long, and that reaches a router in company (another such prompt
 *     reached it within a late propagation delay and a millisecond) is decided at once only by the
 *     router first in turn ({@link PeerConcurrency#turn}); a router of turn {@code t} holds it
 *     {@code t × (late delay + 1 ms)}, at most the prompt's own compute time and {@code
 *     holdMaxMillis}, so it sees where the routers before it started the prefixes of the same
 *     burst. New prefixes arriving together are a batch's or a fan-out's, whose siblings (a group
 *     sharing a system prompt, an agent's subtasks sharing its context) reach the other routers
 *     too; deciding them blind at once, each router starts the shared prefix on a replica of its
 *     own and it is computed as many times. A lone new prompt waits for nothing, and neither does
 *     one computed in less than this, cheap to compute twice. 0 is off. Measured in the lab
 *     (sglang-gsp: 1,024 requests at one instant, 64 groups sharing a 2,048-token prefix; 8
 *     replicas × 65,536 blocks, 5 ms, seed 1, 4 Dec 2026; p90 TTFT ms / hit rate, 20 against 0, one
 *     router 710 / 0.882): 2 routers 753 / 0.878 against 1,077 / 0.826, 4 754 / 0.877 against 1,609
 *     / 0.740, 8 754 / 0.869 against 2,175 / 0.645, 16 929 / 0.847 against 2,354 / 0.594. Without
 *     the company rule, 8 routers on the conversation trace under a 2 ms jitter lost 12 ms (532
 *     against 520), every new conversation waiting; with it, that and the other workloads are
 *     unchanged ({@code docs/results/lab-cold-lead-2026-12-04})
 * @param coldLookMillis with cold leads: a prompt that could lead but reaches a router alone, at a
 *     turn after the first, waits this long (rounded up to whole ms; 0: not at all) for company,
 *     and if another new prompt arrives meanwhile waits out its turn as above. The first new prompt
 *     of a burst to reach each router is otherwise decided at once, blind, like a lone one
 * @param coldFollowShare with cold leads: a held prompt whose prefix a router before it has started
 *     meanwhile, now cached for at least this share of the prompt, goes to the replica holding the
 *     most of it (of equals, the cheapest) whatever the cost says (0: off, by cost as any request).
 *     Its cost sees the holder's queue with the followers the routers decided a step earlier, but
 *     another replica's without the followers of the prefixes it holds, which wait on their routers
 *     like this one: one that looks lighter gets diverted followers from several routers, each
 *     computing the whole prefix again. Measured in the lab (sglang-gsp, 8 replicas × 65,536
 *     blocks, 5 ms, seeds 1-3, 4 Dec 2026; p90 TTFT ms at 8 / 16 routers, one router 710): 710 /
 *     710 at every seed, against 710 / 753, 753 / 753, 710 / 753 by cost, hit rate 0.882 as one
 *     router's. Following any part of the prompt herds the conversation trace, whose new
 *     conversations share short prefixes: 8 routers under a 2 ms jitter 1,571 ms against 520
 * @param intents among several routers, ungated: every router announces each long request as it
 *     arrives and decides it one observed propagation delay later ({@code intentsFromMillis});
 *     before deciding, it places the peers' requests due before its own as phantoms, and all decide
 *     with the first router's timing model, so the requests of one instant are placed as by one
 *     router (see {@link TtftPolicy}). The ingress carries them since 3 Dec 2026 ({@code
 *     RouteIntent} and {@code SharedTiming} on the intents topic); inert for a lone router. On by
 *     default since 3 Dec 2026, once the near-tie rule announced requests share spread exact ties
 *     ({@link PeerIntents#order}): before, they all went to the first replica and at 8 routers
 *     mooncake-synthetic lost hit rate (542 ms / 0.529 against 534 / 0.549 off, load max/mean
 *     2.09); with the spread 530 / 0.541 (1.11). Measured in the lab (conversation trace, all
 *     12,031 requests, 8 replicas × 65,536 blocks, 5 ms, 3 Dec 2026; p90 TTFT ms / hit at 1 / 8 /
 *     16 routers): as recorded 514 / 496 / 502 (hit 0.266 / 0.270 / 0.271) against 514 / 563 / 579
 *     (0.266 / 0.274 / 0.273) off; spread 468 / 474 / 473 against 468 / 483 / 484. Each router
 *     fitting its own timing model instead, 8 routers as recorded gave 609 ms (every request
 *     waiting): routers that predict differently place each other's requests differently
 * @param intentsFromMillis under intents, only a request whose uncached prefill takes at least this
 *     long on every candidate waits the propagation delay; shorter ones are decided at once (still
 *     after the peers' announced requests due before them, but not announced themselves). 50 ms:
 *     with 0 (every request waiting) 8 routers gave 535 ms p90 on the conversation trace as
 *     recorded (against 500 at 50) and multi-turn-chat, whose TTFTs are tens of milliseconds, 44 ms
 *     (39 at 50, 38 without intents)
 * @param lagFromMillis a replica whose first tokens have lately arrived later than predicted by
 *     more than this, on average over this router's requests, is charged the excess ({@link
 *     ReplicaLag}): the timing model does not see a replica out of sequence slots, a slower GPU or
 *     a noisy neighbour. 50 ms: ordinary prediction error changes no decision (with 0,
 *     mooncake-synthetic's hit rate fell from 0.5438 to 0.5388). Measured in the lab (8 replicas ×
 *     65,536 blocks, 1 router, 3 Dec 2026, without {@code soloColdByLoad}; see the README's "Where
 *     a new prefix starts, and a replica slower than predicted"): llmd-b2b at seed 3, where three
 *     replicas filled their 256 sequence slots, p90 / p99 TTFT 63.5 / 831 ms without, 60.8 / 244
 *     with, and at seed 5 57.8 / 206 against 57.5 / 158; seeds 1, 2 and 4, multi-turn-chat,
 *     mooncake-synthetic, sglang-gsp and the conversation trace unchanged
 * @param lagHalfLifeMillis the lag of a replica halves every this many milliseconds without a first
 *     token from it, so one no longer sent anything is tried again; 0 turns the charge off
 * @param lagWarmup the first this many first tokens from each replica, and again after each new
 *     epoch of its stream (an engine restart), do not count towards its lag: a fresh engine and a
 *     fresh router's connections answer the first requests late for reasons that pass. 8: in one CI
 *     run a data-parallel engine's ranks, two cold requests each, were charged enough lag to send a
 *     cached prompt's repeat to an idle rank without it; the lab's figures are unchanged (its
 *     replicas fill their sequence slots after hundreds of requests)
 * @param soloColdByLoad under {@code own}, a lone router sends a prompt no replica holds any of to
 *     a near-tie with the fewest requests in flight (by turn among those), rather than by turn
 *     among all of them: the prefix it starts draws its follow-ups back, so where it lands sets
 *     that replica's load for as long as they come. Measured in the lab (8 replicas × 65,536
 *     blocks, 1 router, 3 Dec 2026, with {@code lagFromMillis} on; see the README's "Where a new
 *     prefix starts"): llmd-b2b p90 TTFT over seeds 1-5 55.3 ms against 57.7 off (its 150 groups
 *     start cold: 13 to 24 per replica off); conversation, multi-turn-chat and sglang-gsp
 *     unchanged; mooncake-synthetic 502 ms / 0.5417 against 515 / 0.5438, within the spread of its
 *     hit rate under small changes of the tie band (0.540-0.545 either way). Which near-tie is the
 *     least loaded: {@code familyHalfLifeMillis}
 * @param familyHalfLifeMillis under {@code soloColdByLoad}, the least loaded near-tie is the one on
 *     which this router has lately started the fewest new prefixes (prompts no replica held any of:
 *     each one a family whose later requests come back to it), each counted with this half-life
 *     ({@link PrefixFamilies}), rather than the one with the fewest requests in flight (the rule
 *     with 0). The families a replica holds set its load for as long as their requests come; the
 *     requests in flight when a family starts reflect a few seconds of them, and drift. 600,000 (10
 *     minutes): measured in the lab (8 replicas × 65,536 blocks, 1 router, 4 Dec 2026, see the
 *     README's "Where a new prefix starts, counted in prefixes"): llmd-b2b p90 TTFT at seeds 1-5
 *     54.83, 54.70, 55.16, 54.45, 54.79 ms (load max/mean 1.014 each) against 56.04, 55.10, 55.34,
 *     55.08, 54.99 by in flight (1.07-1.17): its 150 groups start cold, and by families every
 *     replica gets 18 or 19 of them; the same to 0.01 ms with half-lives of 1, 3 and 60 minutes.
 *     Multi-turn-chat, sglang-gsp and the conversation trace unchanged; mooncake-synthetic (62 % of
 *     its requests find nothing cached) 505.8 ms / 0.5414 against 501.9 / 0.5417
 * @param soloBurstByFamilies under {@code familyHalfLifeMillis}, a lone router's prompt that no
 *     replica holds any of, decided in the same millisecond as the one before it (a burst of new
 *     prefixes), goes to the replica where the fewest prefixes were lately started of all those not
 *     busy, of equals the cheapest, not only of the near-ties. In a burst the queues show the order
 *     in which its requests happened to come, not yet the followers of each prefix: a replica that
 *     got its groups' followers early is passed over for new prefixes, and later, with fewer groups
 *     than the rest, draws whole groups away from their replicas, each computing its prefix again.
 *     Measured in the lab (8 replicas × 65,536 blocks, 1 router, 4 Dec 2026, see the README's "A
 *     burst of new prefixes at one router"): sglang-gsp at seed 5 709.5 ms / 0.8824 against 753.5 /
 *     0.8768 (4 to 9 groups per replica), seeds 1-4 unchanged at 709.5 / 0.8824; mooncake-synthetic
 *     over 8 draws under a 2 ms jitter 503.0 ms / 0.5447 against 503.7 / 0.5430, the exact replay
 *     525.4 / 0.5447 against 505.7 / 0.5414; llmd-b2b, multi-turn-chat and the conversation trace
 *     unchanged
 * @param coldMatchShare a prompt of which no replica holds at least this share is placed as if no
 *     replica held any of it (its cost counts the whole prompt everywhere; whether it is a cold
 *     prompt for the other rules is still decided on what is held). Every request of the
 *     conversation trace opens with the same 512-token block: a replica that has not computed it
 *     yet looked slower by that block for every request, so at light load it never got one. At a
 *     tenth of the trace's rate (8 replicas × 65,536 blocks, 5 Dec 2026) 3 of 8 replicas got no
 *     request, and kvrouter reached 498 ms p90 TTFT / 0.200 hit rate against sglang_cache_aware's
 *     471 / 0.270; with 0.1, every replica is used: 457.8 / 0.2716 (8 routers at 5 ms: 463.7 /
 *     0.2708 against 498.4 / 0.2178). At the trace's own rate, 1 router: 502.2 / 0.2662 against
 *     502.8 / 0.2644 as recorded, 471.1 / 0.2680 against 472.8 / 0.2651 spread; 8 and 16 routers at
 *     5 ms 519 / 0.272 and 518.5 / 0.2748 against 517 / 0.273 and 515.1 / 0.2735. sglang-gsp,
 *     llmd-b2b, multi-turn-chat and mooncake-synthetic unchanged. 0.05 gives the same; 0.25 and 0.5
 *     cache less (light load 0.2702 and 0.2571, mooncake-synthetic 0.5437 and 0.5424 against
 *     0.5447). 0 is off
 */
public record KvRouterConfig(
    int chunkTokens,
    boolean fitTiming,
    double fitForgetting,
    String concurrency,
    double workWeight,
    double tieMillis,
    double tieRelative,
    long rotationMillis,
    long horizonMillis,
    long maxDelayMillis,
    double workShare,
    boolean stripe,
    boolean strictFirst,
    double delayPriorMillis,
    double unseenBand,
    boolean prefillProgress,
    double blindMillis,
    double holdFromMillis,
    int holdClasses,
    double holdStep,
    double holdMaxMillis,
    double sessionShare,
    double soloHoldMillis,
    double burstHoldFromMillis,
    double burstHoldStep,
    double burstConcurrency,
    double coldLeadFromMillis,
    double coldLookMillis,
    double coldFollowShare,
    boolean intents,
    double intentsFromMillis,
    double lagFromMillis,
    double lagHalfLifeMillis,
    int lagWarmup,
    boolean soloColdByLoad,
    double sessionWork,
    double familyHalfLifeMillis,
    boolean soloBurstByFamilies,
    double coldMatchShare) {

  /** The concurrency modes, see above. */
  public static final java.util.List<String> CONCURRENCY =
      java.util.List.of("off", "random", "turns", "unseen", "own");

  public KvRouterConfig {
    if (chunkTokens < 1) {
      throw new IllegalArgumentException("chunkTokens must be >= 1");
    }
    if (!(delayPriorMillis >= 0)) {
      throw new IllegalArgumentException("delayPriorMillis must be >= 0, was " + delayPriorMillis);
    }
    if (!(holdFromMillis >= 0) || holdClasses < 0 || !(holdStep >= 0) || !(holdMaxMillis >= 0)) {
      throw new IllegalArgumentException(
          "holdFromMillis, holdClasses, holdStep and holdMaxMillis must be >= 0, were "
              + holdFromMillis
              + ", "
              + holdClasses
              + ", "
              + holdStep
              + ", "
              + holdMaxMillis);
    }
    if (!(intentsFromMillis >= 0)) {
      throw new IllegalArgumentException(
          "intentsFromMillis must be >= 0, was " + intentsFromMillis);
    }
    if (!(lagFromMillis >= 0) || !(lagHalfLifeMillis >= 0) || lagWarmup < 0) {
      throw new IllegalArgumentException(
          "lagFromMillis, lagHalfLifeMillis and lagWarmup must be >= 0, were "
              + lagFromMillis
              + ", "
              + lagHalfLifeMillis
              + " and "
              + lagWarmup);
    }
    if (!(soloHoldMillis >= 0)
        || !(burstHoldFromMillis >= 0)
        || !(burstHoldStep >= 0)
        || !(burstConcurrency >= 0)) {
      throw new IllegalArgumentException(
          "soloHoldMillis, burstHoldFromMillis, burstHoldStep and burstConcurrency must be >= 0,"
              + " were "
              + soloHoldMillis
              + ", "
              + burstHoldFromMillis
              + ", "
              + burstHoldStep
              + " and "
              + burstConcurrency);
    }
    if (!(coldLeadFromMillis >= 0) || !(coldLookMillis >= 0)) {
      throw new IllegalArgumentException(
          "coldLeadFromMillis and coldLookMillis must be >= 0, were "
              + coldLeadFromMillis
              + " and "
              + coldLookMillis);
    }
    if (!(coldFollowShare >= 0 && coldFollowShare <= 1)) {
      throw new IllegalArgumentException(
          "coldFollowShare must be in [0, 1], was " + coldFollowShare);
    }
    if (!(familyHalfLifeMillis >= 0)) {
      throw new IllegalArgumentException(
          "familyHalfLifeMillis must be >= 0, was " + familyHalfLifeMillis);
    }
    if (!(coldMatchShare >= 0 && coldMatchShare < 1)) {
      throw new IllegalArgumentException("coldMatchShare must be in [0, 1), was " + coldMatchShare);
    }
    if (!(sessionWork >= 0)) {
      throw new IllegalArgumentException("sessionWork must be >= 0, was " + sessionWork);
    }
    if (!(sessionShare >= 0)) {
      throw new IllegalArgumentException("sessionShare must be >= 0, was " + sessionShare);
    }
    if (!CONCURRENCY.contains(concurrency)) {
      throw new IllegalArgumentException(
          "concurrency must be one of " + CONCURRENCY + ", was " + concurrency);
    }
  }

  /** The defaults described above. */
  public static KvRouterConfig defaults() {
    return new KvRouterConfig(
        8192, true, 0.999, "own", 1.0, 2.0, 0.02, 1000, 30_000, 1000, 0.0, false, true, 5.0, 1.0,
        false, 100.0, 400.0, 3, 1.2, 100.0, 1.0, 1.0, 150.0, 2.0, 0.5, 20.0, 1.0, 0.5, true, 50.0,
        50.0, 1000.0, 8, true, 1.5, 600_000.0, true, 0.1);
  }

  /**
   * The same parameters with some changed by name, {@code workWeight=1.5@tieMillis=20} (settings
   * separated by {@code @}, each a component name and a value of its type): what a lab run compares
   * side by side as {@code kvrouter@workWeight=1.5@tieMillis=20} ({@link Policies#TUNED}), so a
   * parameter is measured against the default in one run rather than by rebuilding.
   *
   * @throws IllegalArgumentException for an unknown name, a value that does not parse, or one the
   *     constructor rejects
   */
  public KvRouterConfig with(String settings) {
    RecordComponent[] components = KvRouterConfig.class.getRecordComponents();
    Object[] values = new Object[components.length];
    Class<?>[] types = new Class<?>[components.length];
    try {
      for (int i = 0; i < components.length; i++) {
        values[i] = components[i].getAccessor().invoke(this);
        types[i] = components[i].getType();
      }
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e);
    }
    for (String setting : settings.split("@")) {
      int eq = setting.indexOf('=');
      String key = eq < 0 ? setting : setting.substring(0, eq);
      int at = indexOf(components, key);
      if (eq < 0 || at < 0) {
        throw new IllegalArgumentException(
            "kvrouter setting '" + setting + "' is not NAME=VALUE with NAME one of " + names());
      }
      values[at] = parse(types[at], key, setting.substring(eq + 1));
    }
    try {
      return KvRouterConfig.class.getDeclaredConstructor(types).newInstance(values);
    } catch (InvocationTargetException e) {
      throw new IllegalArgumentException(e.getCause().getMessage(), e.getCause());
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e);
    }
  }

  private static int indexOf(RecordComponent[] components, String name) {
    for (int i = 0; i < components.length; i++) {
      if (components[i].getName().equals(name)) {
        return i;
      }
    }
    return -1;
  }

  private static java.util.List<String> names() {
    return java.util.Arrays.stream(KvRouterConfig.class.getRecordComponents())
        .map(RecordComponent::getName)
        .toList();
  }

  private static Object parse(Class<?> type, String key, String value) {
    try {
      if (type == int.class) {
        return Integer.parseInt(value);
      }
      if (type == long.class) {
        return Long.parseLong(value);
      }
      if (type == double.class) {
        return Double.parseDouble(value);
      }
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "kvrouter setting " + key + ": '" + value + "' is not a " + type, e);
    }
    if (type == boolean.class) {
      if (!value.equals("true") && !value.equals("false")) {
        throw new IllegalArgumentException(
            "kvrouter setting " + key + ": '" + value + "' is not true or false");
      }
      return Boolean.parseBoolean(value);
    }
    return value;
  }

  public KvRouterConfig withConcurrency(String mode) {
    return with("concurrency=" + mode);
  }

  public KvRouterConfig withFitTiming(boolean on) {
    return with("fitTiming=" + on);
  }
}
