package dev.lease.core;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.UndeclaredThrowableException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.Deque;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.Test;

import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.LeaseSpec;
import dev.lease.LeaseUnavailableException;
import dev.lease.FencingToken;
import dev.lease.spi.BackendTraits;
import dev.lease.spi.Grant;
import dev.lease.spi.GrantFence;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;
import dev.lease.spi.LossListener;

/**
 * Random schedules against a simulated store: nested sections on a few contended names, losses of one lease or of
 * every lease of a thread or of the whole store at once (a suspended ZooKeeper session), leases closed inside their
 * own section, foreign interrupts, renewals that fail or answer late, jumps of the engine's monotonic clock (the
 * process paused), grant requests whose answer is lost, sections fenced at grant that re-enter their lease inside a
 * transaction holding the fence row's lock (the README's quick-start shape), and the engine closed while all of it
 * runs, its releases hanging past the grace period. After each schedule it checks what the engine promises:
 * <ul>
 *   <li>every section still running on a lost lease is interrupted: it can only leave through its interrupt, so one
 *       still running at the end was never told;</li>
 *   <li>no interrupt of ours survives the exit of the last lost section, and a foreign one is never invented;</li>
 *   <li>every grant the store made is released in the end, including those whose answer was lost;</li>
 *   <li>validity never comes back once seen false;</li>
 *   <li>never two valid holders of one name;</li>
 *   <li>fence at grant is told the lease's validity; a re-entered section never fences again what its grant fenced,
 *       and is never fenced like a new grant, in a transaction of its own that would wait for the lock of the
 *       transaction it suspended;</li>
 *   <li>closing declares every held lease lost before it sends the first release, and returns within its grace
 *       period however long the releases hang.</li>
 * </ul>
 * Seeded: the seed is in every failure message and {@code -Dlease-test.engine-seed=N} replays the same choices (thread
 * timing still varies). {@code -Psoak} runs many more schedules; {@code -Dlease-test.engine-schedules=N} sets the count.
 */
class LeaseEngineRandomizedTest {

    private static final long SEED = Long.getLong("lease-test.engine-seed", new Random().nextLong());
    private static final int SCHEDULES = Integer.getInteger("lease-test.engine-schedules",
            Boolean.getBoolean("lease-test.soak") ? 1000 : 25);
    private static final String[] NAMES = {"a", "b", "c"};
    /** How long closing waits for its releases; the store makes them hang up to ten times as long. */
    private static final Duration SHUTDOWN_GRACE = Duration.ofMillis(100);

    @Test
    void randomSchedulesKeepEveryPromise() throws Exception {
        System.out.println("LeaseEngineRandomizedTest: seed " + SEED + ", " + SCHEDULES
                + " schedules (replay with -Dlease-test.engine-seed=" + SEED + ")");
        Random seeds = new Random(SEED);
        for (int i = 0; i < SCHEDULES; i++) {
            Schedule schedule = new Schedule(seeds.nextLong());
            List<String> violations = schedule.run();
            assertThat(violations).as("schedule %d of seed %d (replay with -Dlease-test.engine-seed=%d)", i, SEED, SEED)
                    .isEmpty();
            assertThat(schedule.sections).as("sections entered in schedule %d", i).hasPositiveValue();
        }
    }

    /** One run: three worker threads, a driver (the test thread) choosing faults, and a validity sampler. */
    private static final class Schedule {

        final Random random;
        final SimulatedStore store;
        final SimulatedFence fence;
        final LeaseEngine engine;
        final List<Worker> workers = new ArrayList<>();
        final List<String> violations = Collections.synchronizedList(new ArrayList<>());
        final Set<Section> open = ConcurrentHashMap.newKeySet();
        final Set<HeldLease> seen = ConcurrentHashMap.newKeySet();
        final Set<HeldLease> seenInvalid = ConcurrentHashMap.newKeySet();
        final AtomicLong sequence = new AtomicLong();
        /** How far the engine's monotonic clock is ahead of the real one: jumps model a pause of the whole process. */
        final AtomicLong clockAhead = new AtomicLong();
        final AtomicInteger sections = new AtomicInteger();
        volatile boolean stop;
        volatile boolean sampling = true;

        Schedule(long seed) {
            this.random = new Random(seed);
            this.store = new SimulatedStore(new Random(random.nextLong()), violations);
            this.fence = new SimulatedFence(violations);
            Map<LeaseKind, LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
            routes.put(LeaseKind.CORRECTNESS, store);
            this.engine = LeaseEngine.builder(BackendRouter.of(routes)).grantFence(fence)
                    .clock(() -> System.nanoTime() + clockAhead.get()).build();
            this.engine.shutdownGrace(SHUTDOWN_GRACE);
            this.store.engine = engine;
            for (int i = 0; i < 3; i++) {
                workers.add(new Worker(i, new Random(random.nextLong())));
            }
        }

        List<String> run() throws InterruptedException {
            Thread sampler = new Thread(this::sample, "validity-sampler");
            sampler.start();
            workers.forEach(Thread::start);
            // Faults and the close start once a section runs: a schedule that closes the engine before any worker got
            // in (a slow machine, an early close) would test nothing.
            long entered = System.nanoTime() + seconds(10).toNanos();
            while (sections.get() == 0 && System.nanoTime() - entered < 0) {
                LockSupport.parkNanos(100_000);
            }
            int steps = 150 + random.nextInt(150);
            int closeAt = random.nextBoolean() ? random.nextInt(steps) : -1;
            for (int step = 0; step < steps; step++) {
                if (step == closeAt) {
                    close();
                }
                act();
                LockSupport.parkNanos(random.nextInt(2_000_000));
            }
            stop = true;
            // A section on a valid lease is told to finish; one on a lost lease can only leave through its interrupt.
            long until = System.nanoTime() + seconds(10).toNanos();
            while (workers.stream().anyMatch(Thread::isAlive) && System.nanoTime() - until < 0) {
                sorted(open).stream().filter(s -> !s.lease.isMarkedLost()).forEach(s -> s.finish.countDown());
                LockSupport.parkNanos(1_000_000);
            }
            for (Section s : sorted(open)) {
                violations.add("section on " + s.lease + " (" + s.worker.getName() + ") still running "
                        + seconds(10) + " after the schedule ended: its lost lease never interrupted it");
            }
            for (Worker w : workers) {
                w.interrupt();
                w.join(seconds(10).toMillis());
            }
            close();
            until = System.nanoTime() + seconds(10).toNanos();
            while (!store.unreleased().isEmpty() && System.nanoTime() - until < 0) {
                LockSupport.parkNanos(1_000_000);
            }
            store.unreleased().forEach(g -> violations.add("grant " + g + " was never released"));
            sampling = false;
            sampler.join();
            return violations;
        }

        /** Closes the engine, whose releases may hang: it must return within its grace period all the same. */
        private void close() {
            long start = System.nanoTime();
            engine.close();
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            if (took.compareTo(SHUTDOWN_GRACE.plus(seconds(1))) > 0) {
                violations.add("closing took " + took + ", past its grace period of " + SHUTDOWN_GRACE);
            }
        }

        private void act() {
            List<Section> sections = sorted(open);
            int roll = random.nextInt(100);
            if (roll < 25) {
                List<Section> blocked = sections.stream().filter(s -> s.blocked && !s.lease.isMarkedLost()).toList();
                if (!blocked.isEmpty()) {
                    blocked.get(random.nextInt(blocked.size())).finish.countDown();
                }
            }
            else if (roll < 33 && !sections.isEmpty()) {
                store.reportLost(sections.get(random.nextInt(sections.size())).lease, "lost alone");
            }
            else if (roll < 37 && !sections.isEmpty()) {
                // Every lease of one thread at once, in a random order: what a suspended session does to nested sections.
                Thread victim = sections.get(random.nextInt(sections.size())).worker;
                List<Section> its = new ArrayList<>(sections.stream().filter(s -> s.worker == victim).toList());
                Collections.shuffle(its, random);
                its.forEach(s -> store.reportLost(s.lease, "lost with its thread's other leases"));
            }
            else if (roll < 38) {
                store.reportAllLost();
            }
            else if (roll < 41) {
                workers.get(random.nextInt(workers.size())).interruptForeign();
            }
            else if (roll < 45) {
                store.failRenewals.addAndGet(1 + random.nextInt(3));
            }
            else if (roll < 48) {
                // About a short lease's ttl: a renewal in flight may then be answered just after the deadline.
                clockAhead.addAndGet(Duration.ofMillis(5 + random.nextInt(45)).toNanos());
            }
        }

        private void sample() {
            while (sampling) {
                for (HeldLease lease : seen) {
                    if (!lease.isValid()) {
                        seenInvalid.add(lease);
                    }
                    else if (seenInvalid.contains(lease)) {
                        violations.add("validity came back: " + lease);
                    }
                }
                LockSupport.parkNanos(200_000);
            }
        }

        static List<Section> sorted(Set<Section> sections) {
            List<Section> list = new ArrayList<>(sections);
            list.sort(Comparator.comparingLong(s -> s.id));
            return list;
        }

        /** A worker runs nested sections until the schedule stops, checking its interrupt status at every exit. */
        final class Worker extends Thread {

            final Random r;
            final Deque<Section> stack = new ArrayDeque<>();
            /** A foreign interrupt was sent and not yet seen at the top level; guarded by this. */
            boolean foreignPending;

            Worker(int index, Random r) {
                super("worker-" + index);
                setDaemon(true);
                this.r = r;
            }

            @Override
            public void run() {
                while (!stop) {
                    try {
                        section(0);
                    }
                    catch (LeaseLostException | LeaseUnavailableException | UndeclaredThrowableException expected) {
                        // lost, busy, shut down, or the section gave up on a foreign interrupt
                    }
                    catch (RuntimeException | Error ex) {
                        violations.add(getName() + " failed: " + ex);
                    }
                    synchronized (this) {
                        if (Thread.interrupted() && !foreignPending) {
                            violations.add(getName() + ": an interrupt survived the exit of its last section");
                        }
                        foreignPending = false;
                    }
                }
            }

            synchronized void interruptForeign() {
                foreignPending = true;
                interrupt();
            }

            private Object section(int depth) {
                boolean shortTtl = r.nextInt(3) == 0;
                String name = NAMES[r.nextInt(NAMES.length)];
                LeaseSpec spec = LeaseSpec.of(name, LeaseKind.CORRECTNESS)
                        .withTtl(shortTtl ? Duration.ofMillis(45) : Duration.ofMinutes(1))
                        .withRenewEvery(shortTtl ? Duration.ofMillis(12) : Duration.ofSeconds(20))
                        .withWaitFor(r.nextBoolean() ? Duration.ZERO : Duration.ofMillis(r.nextInt(50)));
                int fenced = r.nextInt(3);
                if (fenced > 0) {
                    spec = spec.withFence(resource(name, fenced));
                }
                return engine.execute(spec, lease -> body((HeldLease) lease, depth));
            }

            /** One of the two resources written under lease {@code name}. */
            private static String resource(String name, int which) {
                return (which == 1 ? "r-" : "r2-") + name;
            }

            private Object body(HeldLease lease, int depth) throws InterruptedException {
                Section section = enter(lease);
                boolean openedTransaction = false;
                try {
                    if (r.nextInt(3) == 0) {
                        // @Transactional and fence.advance: the transaction keeps the row locked until this section ends.
                        openedTransaction = fence.begin();
                        fence.writeInTransaction(resource(lease.name(), 1 + r.nextInt(2)), lease.token());
                    }
                    int children = depth < 2 ? r.nextInt(3) : 0;
                    for (int i = 0; i < children; i++) {
                        try {
                            section(depth + 1);
                        }
                        catch (LeaseLostException | LeaseUnavailableException | UndeclaredThrowableException skipped) {
                            // "skip this item": the enclosing section goes on, and must not carry a stray interrupt
                            checkNoStrayInterrupt();
                        }
                    }
                    if (r.nextInt(12) == 0) {
                        lease.close();
                    }
                    section.blocked = true;
                    section.finish.await();
                    return null;
                }
                catch (InterruptedException ex) {
                    if (anyLost()) {
                        throw ex;
                    }
                    // Not ours: a well-behaved section stops and keeps the interrupt for whoever sent it.
                    Thread.currentThread().interrupt();
                    return null;
                }
                finally {
                    if (openedTransaction) {
                        fence.end();
                    }
                    section.blocked = false;
                    stack.pop();
                    open.remove(section);
                }
            }

            private Section enter(HeldLease lease) {
                sections.incrementAndGet();
                seen.add(lease);
                store.entered(lease);
                for (Section other : open) {
                    if (other.lease != lease && other.lease.name().equals(lease.name()) && other.lease.isValid()
                            && lease.isValid()) {
                        violations.add("two valid holders of '" + lease.name() + "': " + other.lease + " and " + lease);
                    }
                }
                Section section = new Section(sequence.incrementAndGet(), this, lease);
                stack.push(section);
                open.add(section);
                return section;
            }

            private void checkNoStrayInterrupt() {
                synchronized (this) {
                    // Flag first: our interrupt is only ever sent after its lease is marked lost.
                    if (isInterrupted() && !foreignPending && !anyLost()) {
                        violations.add(getName() + ": interrupted after a nested section ended, though no lease of "
                                + "its enclosing sections " + stack + " is lost");
                    }
                }
            }

            private boolean anyLost() {
                return stack.stream().anyMatch(s -> s.lease.isMarkedLost());
            }
        }
    }

    /** One section running on a worker: it blocks until the driver finishes it or an interrupt ends it. */
    private static final class Section {

        final long id;
        final Thread worker;
        final HeldLease lease;
        final CountDownLatch finish = new CountDownLatch(1);
        volatile boolean blocked;

        Section(long id, Thread worker, HeldLease lease) {
            this.id = id;
            this.worker = worker;
            this.lease = lease;
        }

        @Override
        public String toString() {
            return lease.toString();
        }
    }

    /**
     * A store with real exclusion and expiry on the monotonic clock, whose faults the schedule chooses: renewals that
     * fail or answer late, grant requests that fail before or after granting, losses reported like a suspended
     * session. A loss report does not free the name (the session may still hold it); a release or expiry does.
     * A test double for the engine, never for a backend.
     */
    private static final class SimulatedStore implements LeaseBackend {

        final Random random;
        final AtomicLong tokens = new AtomicLong();
        final AtomicInteger failRenewals = new AtomicInteger();
        final List<String> violations;
        volatile LeaseEngine engine;
        private final Map<String, StoreGrant> current = new HashMap<>();
        private final Map<Long, StoreGrant> grants = new ConcurrentHashMap<>();

        SimulatedStore(Random random, List<String> violations) {
            this.random = random;
            this.violations = violations;
        }

        private int roll(int bound) {
            synchronized (random) {
                return random.nextInt(bound);
            }
        }

        @Override
        public String id() {
            return "simulated";
        }

        @Override
        public BackendTraits traits() {
            return BackendTraits.fenced();
        }

        @Override
        public Optional<Grant> tryAcquire(GrantRequest request) {
            int roll = roll(100);
            if (roll < 3) {
                throw new IllegalStateException("store unreachable");
            }
            StoreGrant grant;
            synchronized (this) {
                StoreGrant holder = current.get(request.name());
                long now = System.nanoTime();
                if (holder != null && now - holder.expiresAt < 0) {
                    return Optional.empty();
                }
                grant = new StoreGrant(request.name(), tokens.incrementAndGet(), request.attempt(), request.onLoss(),
                        request.ttl().toNanos());
                grant.expiresAt = now + grant.ttlNanos;
                current.put(grant.name, grant);
                grants.put(grant.token, grant);
            }
            if (roll < 6) {
                throw new IllegalStateException("the grant's answer was lost");
            }
            return Optional.of(grant);
        }

        @Override
        public boolean renew(Grant grant) throws Exception {
            StoreGrant g = (StoreGrant) grant;
            if (roll(5) == 0) {
                Thread.sleep(roll(60));
            }
            if (failRenewals.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                throw new IllegalStateException("renewal failed");
            }
            synchronized (this) {
                long now = System.nanoTime();
                if (current.get(g.name) != g || now - g.expiresAt >= 0) {
                    return false;
                }
                g.expiresAt = now + g.ttlNanos;
                return true;
            }
        }

        /**
         * The release of a lease the closing engine declared lost, whether closing sends it or the lease's section on
         * its way out, finds no lease of the engine still held (closing turns them all invalid before it interrupts
         * any holder), and hangs up to ten times the grace period, as a store answering only at its client timeout
         * would.
         */
        @Override
        public void release(Grant grant) {
            StoreGrant g = (StoreGrant) grant;
            HeldLease lease = g.lease;
            String reason = lease == null ? null : lease.lossReason();
            if (reason != null && reason.contains("lease engine was closed")) {
                List<HeldLeaseSnapshot> held = engine.held();
                if (!held.isEmpty()) {
                    violations.add("closing released " + grant + " while " + held + " were still held (valid, not lost)");
                }
                long until = System.nanoTime() + SHUTDOWN_GRACE.toNanos() * roll(10);
                while (System.nanoTime() - until < 0) {
                    LockSupport.parkNanos(until - System.nanoTime());
                }
            }
            synchronized (this) {
                free(g);
            }
        }

        /** The lease the engine made of {@code lease}'s grant, once a section runs on it. */
        void entered(HeldLease lease) {
            StoreGrant g = grants.get(lease.token().value());
            if (g != null) {
                g.lease = lease;
            }
        }

        @Override
        public synchronized void abandon(GrantRequest request) {
            grants.values().stream().filter(g -> g.attempt.equals(request.attempt())).forEach(this::free);
        }

        @Override
        public synchronized void awaitRelease(String name, Duration maxWait) throws InterruptedException {
            StoreGrant holder = current.get(name);
            if (holder != null && System.nanoTime() - holder.expiresAt < 0) {
                wait(Math.max(1, maxWait.toMillis()));
            }
        }

        private void free(StoreGrant g) {
            g.released = true;
            if (current.get(g.name) == g) {
                current.remove(g.name);
                notifyAll();
            }
        }

        void reportLost(HeldLease lease, String reason) {
            StoreGrant g = grants.get(lease.token().value());
            if (g != null) {
                g.onLoss.leaseLost(reason);
            }
        }

        void reportAllLost() {
            List<StoreGrant> held;
            synchronized (this) {
                held = List.copyOf(current.values());
            }
            held.forEach(g -> g.onLoss.leaseLost("every lease of the session lost"));
        }

        List<StoreGrant> unreleased() {
            return grants.values().stream().filter(g -> !g.released).toList();
        }
    }

    /**
     * The resource side: a fence value per resource and row locks held by transactions, one per worker thread, that
     * last until the section that opened them ends (a @Transactional leased method that advanced the fence). Fence
     * at grant in a transaction of its own waits for another transaction's lock no longer than the validity it is
     * given (and 200 ms here), and fails at once on its own thread's suspended transaction, as a lock timeout would
     * end that wait; it checks what the engine asks of it. A test double for the engine, never for a fence.
     */
    private static final class SimulatedFence implements GrantFence {

        private static final long MAX_WAIT_NANOS = Duration.ofMillis(200).toNanos();

        final List<String> violations;
        private final Map<String, Long> fences = new HashMap<>();
        private final Map<String, Thread> locks = new HashMap<>();
        private final Set<String> fencedAtGrant = ConcurrentHashMap.newKeySet();
        private final ThreadLocal<Boolean> inTransaction = new ThreadLocal<>();

        SimulatedFence(List<String> violations) {
            this.violations = violations;
        }

        /** Opens a transaction on this thread unless one is open: true when this call opened it. */
        boolean begin() {
            if (inTransaction.get() != null) {
                return false;
            }
            inTransaction.set(Boolean.TRUE);
            return true;
        }

        /** Ends this thread's transaction: its locks go. */
        synchronized void end() {
            inTransaction.remove();
            locks.values().removeIf(holder -> holder == Thread.currentThread());
            notifyAll();
        }

        /** fence.advance in this thread's transaction, unless another transaction holds the row (then nothing). */
        synchronized void writeInTransaction(String resource, FencingToken token) {
            Thread holder = locks.get(resource);
            if ((holder == null || holder == Thread.currentThread()) && fences.getOrDefault(resource, 0L) <= token.value()) {
                locks.put(resource, Thread.currentThread());
                fences.put(resource, token.value());
            }
        }

        @Override
        public void advanceAtGrant(String resource, FencingToken token) {
            violations.add("fence at grant of " + resource + " with " + token + " was not told the lease's validity");
            throw new IllegalStateException("no validity");
        }

        @Override
        public void advanceAtGrant(String resource, FencingToken token, Duration validity) {
            check(resource, token, validity);
            if (reentered(token)) {
                violations.add("a section re-entering " + token + " was fenced at grant like a new grant, in a "
                        + "transaction of its own (it would wait for the lock of the transaction it suspended)");
            }
            advanceInOwnTransaction(resource, token, validity);
            fencedAtGrant.add(resource + "#" + token.value());
        }

        @Override
        public void advanceOnReentry(String resource, FencingToken token, Duration validity) {
            check(resource, token, validity);
            if (fencedAtGrant.contains(resource + "#" + token.value())) {
                violations.add("a re-entered section fenced " + resource + " again with " + token
                        + ", which its grant had fenced");
            }
            if (inTransaction.get() == null) {
                advanceInOwnTransaction(resource, token, validity);
                return;
            }
            synchronized (this) {
                awaitLock(resource, validity, true);
                refuseIfStale(resource, token);
                locks.put(resource, Thread.currentThread());
                fences.put(resource, token.value());
            }
        }

        private synchronized void advanceInOwnTransaction(String resource, FencingToken token, Duration validity) {
            awaitLock(resource, validity, false);
            refuseIfStale(resource, token);
            fences.put(resource, token.value());
        }

        /** Under this object's lock: waits until no other transaction holds the row, within the bound. */
        private void awaitLock(String resource, Duration validity, boolean joined) {
            long until = System.nanoTime() + Math.min(MAX_WAIT_NANOS, Math.max(0, validity.toNanos()));
            while (true) {
                Thread holder = locks.get(resource);
                if (holder == null || (joined && holder == Thread.currentThread())) {
                    return;
                }
                long left = until - System.nanoTime();
                if (holder == Thread.currentThread() || left <= 0) {
                    throw new IllegalStateException("lock wait on " + resource + " timed out");
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(this, left);
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("lock wait on " + resource + " interrupted");
                }
            }
        }

        private void refuseIfStale(String resource, FencingToken token) {
            long current = fences.getOrDefault(resource, 0L);
            if (current > token.value()) {
                throw new IllegalStateException(resource + " accepted " + current + ", newer than " + token);
            }
        }

        private void check(String resource, FencingToken token, Duration validity) {
            if (validity == null || validity.compareTo(Duration.ofMinutes(1)) > 0) {
                violations.add("fence at grant of " + resource + " with " + token + " was told a validity of "
                        + validity + ", more than any lease's ttl");
            }
        }

        /** Whether the calling worker is inside a section of the lease that holds {@code token}. */
        private static boolean reentered(FencingToken token) {
            return Thread.currentThread() instanceof Schedule.Worker worker
                    && worker.stack.stream().anyMatch(s -> s.lease.grantToken().orElse(-1) == token.value());
        }
    }

    private static final class StoreGrant implements Grant {

        final String name;
        final long token;
        final String attempt;
        final LossListener onLoss;
        final long ttlNanos;
        long expiresAt;
        volatile boolean released;
        volatile HeldLease lease;

        StoreGrant(String name, long token, String attempt, LossListener onLoss, long ttlNanos) {
            this.name = name;
            this.token = token;
            this.attempt = attempt;
            this.onLoss = onLoss;
            this.ttlNanos = ttlNanos;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public OptionalLong token() {
            return OptionalLong.of(token);
        }

        @Override
        public String toString() {
            return name + "#" + token;
        }
    }
}
