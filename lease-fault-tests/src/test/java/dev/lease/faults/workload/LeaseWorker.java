package dev.lease.faults.workload;

import java.time.Duration;

import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.LeaseSpec;
import dev.lease.LeaseTemplate;
import dev.lease.LeaseUnavailableException;
import dev.lease.faults.checker.History.Kind;
import dev.lease.faults.checker.History.Outcome;

/**
 * One holder of a fault scenario, in this JVM or in a child: loops acquire → work → write(token) → release through
 * the real engine ({@link LeaseTemplate#execute}), so renewal, monotonic validity and interrupt-on-loss are all
 * exercised, and reports every step to an {@link EventSink}. The work in the section is {@link SectionWork}: a sleep,
 * then the write, so a holder that is paused or cut off while holding wakes up and tries to write with its old token
 * unless the interrupt stops it first: that write is what the fence must refuse.
 */
public final class LeaseWorker implements Worker {

    /**
     * Runs in the holder's thread right before each write, with the token the write will carry: a child JVM uses it
     * to freeze its worker between deciding to write and writing, a successor to wait after its grant.
     */
    @FunctionalInterface
    public interface BeforeWrite {

        BeforeWrite NONE = token -> {
        };

        /** @throws InterruptedException the engine declared the lease lost meanwhile */
        void beforeWrite(long token) throws InterruptedException;

        /**
         * Whether the write that follows is forced: made on purpose even if the section was interrupted (a frozen
         * process cannot see its loss), so the history does not take it for a section that ignored its interrupt.
         * Asked once per write, right after {@link #beforeWrite}.
         */
        default boolean forcesWrite() {
            return false;
        }

        /** This, then {@code next}; the write is forced when either says so. */
        default BeforeWrite then(BeforeWrite next) {
            BeforeWrite first = this;
            return new BeforeWrite() {
                @Override
                public void beforeWrite(long token) throws InterruptedException {
                    first.beforeWrite(token);
                    next.beforeWrite(token);
                }

                @Override
                public boolean forcesWrite() {
                    return first.forcesWrite() || next.forcesWrite();
                }
            };
        }
    }

    /**
     * What a worker leases and how long it holds; {@code fence}, when not null, is the resource whose fence the
     * engine advances at grant.
     */
    public record Config(String lease, LeaseKind kind, Duration ttl, Duration waitFor, Duration maxHold, long seed,
            String fence) {

        public Config(String lease, LeaseKind kind, Duration ttl, Duration waitFor, Duration maxHold, long seed) {
            this(lease, kind, ttl, waitFor, maxHold, seed, null);
        }

        public Config fencedAtGrant(String resource) {
            return new Config(lease, kind, ttl, waitFor, maxHold, seed, resource);
        }

        LeaseSpec spec() {
            LeaseSpec spec = LeaseSpec.of(lease, kind).withTtl(ttl).withWaitFor(waitFor);
            return fence == null ? spec : spec.withFence(fence);
        }
    }

    private static final Duration BACKOFF = Duration.ofMillis(100);

    private final LeaseTemplate engine;
    private final Config config;
    private final EventSink sink;
    private final SectionWork work;
    private final Object turn = new Object();
    private volatile boolean stopped;
    private boolean standingBy;
    private volatile boolean holding;

    public LeaseWorker(int worker, LeaseTemplate engine, Ledger ledger, Config config, EventSink sink) {
        this(worker, engine, ledger, config, sink, BeforeWrite.NONE);
    }

    public LeaseWorker(int worker, LeaseTemplate engine, Ledger ledger, Config config, EventSink sink,
            BeforeWrite beforeWrite) {
        this.engine = engine;
        this.config = config;
        this.sink = sink;
        this.work = new SectionWork(worker, ledger, sink, config, beforeWrite);
    }

    @Override
    public void stop() {
        synchronized (turn) {
            stopped = true;
            turn.notifyAll();
        }
    }

    /**
     * While on, the worker acquires nothing more once its current cycle ends: a worker that releases and at once
     * acquires again can starve a holder whose backend only polls for a free lease (JDBC), for as long as it likes.
     */
    @Override
    public void standBy(boolean on) {
        synchronized (turn) {
            standingBy = on;
            turn.notifyAll();
        }
    }

    @Override
    public boolean holding() {
        return holding;
    }

    @Override
    public void run() {
        while (awaitTurn()) {
            Thread.interrupted(); // a loss interrupt that arrived as the last cycle ended is not for the next one
            cycle();
        }
    }

    /** Waits while standing by; false once stopped. */
    private boolean awaitTurn() {
        synchronized (turn) {
            while (standingBy && !stopped) {
                try {
                    turn.wait();
                }
                catch (InterruptedException ex) {
                    // A loss interrupt that arrived as the last cycle ended: not a reason to stop standing by.
                }
            }
            return !stopped;
        }
    }

    private void cycle() {
        long acquire = work.nextId();
        long[] token = { -1 };
        long[] release = { 0 };
        sink.invoke(acquire, Kind.ACQUIRE, System.nanoTime());
        try {
            engine.execute(config.spec(), lease -> {
                token[0] = lease.hasToken() ? lease.token().value() : 0;
                sink.complete(acquire, Kind.ACQUIRE, Outcome.OK, token[0], System.nanoTime(), null);
                holding = true;
                try {
                    if (!work.run(lease.name(), token[0])) {
                        return null; // swallowed its interrupt: the engine reports the loss
                    }
                }
                finally {
                    holding = false;
                }
                release[0] = work.nextId();
                sink.invoke(release[0], Kind.RELEASE, System.nanoTime());
                return null;
            });
            sink.complete(release[0], Kind.RELEASE, Outcome.OK, token[0], System.nanoTime(), null);
        }
        catch (LeaseUnavailableException ex) {
            sink.complete(acquire, Kind.ACQUIRE, Outcome.FAIL, -1, System.nanoTime(), ex.getMessage());
            backoff();
        }
        catch (LeaseLostException ex) {
            if (token[0] < 0) {
                // Granted, then lost before the work could start (or refused by the fence at grant): the store made
                // the grant, and it may have advanced the fence, so its token is kept.
                sink.complete(acquire, Kind.ACQUIRE, Outcome.FAIL, ex.token().map(t -> t.value()).orElse(-1L),
                        System.nanoTime(), "lost before the work started: " + ex.getMessage());
            }
            else if (release[0] != 0) {
                sink.complete(release[0], Kind.RELEASE, Outcome.FAIL, token[0], System.nanoTime(), ex.getMessage());
            }
        }
        catch (RuntimeException ex) {
            if (token[0] < 0) {
                sink.complete(acquire, Kind.ACQUIRE, Outcome.UNKNOWN, -1, System.nanoTime(), ex.toString());
            }
            else if (release[0] != 0) {
                sink.complete(release[0], Kind.RELEASE, Outcome.UNKNOWN, token[0], System.nanoTime(), ex.toString());
            }
            backoff();
        }
    }

    private void backoff() {
        try {
            Thread.sleep(BACKOFF.toMillis());
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }
}
