package dev.lease.core;

import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import dev.lease.spi.BackendTraits;
import dev.lease.spi.Grant;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;
import dev.lease.spi.LossListener;

/**
 * A backend whose answers a test scripts, to drive the engine into situations a real store produces only
 * rarely (a renewal that hangs, a loss reported mid-request). It is a test double for the engine, never for a
 * backend: backends are tested against real servers.
 */
class ScriptedBackend implements LeaseBackend {

    enum Renewal { OK, REFUSE, FAIL, HANG }

    final AtomicLong tokens = new AtomicLong();
    final AtomicInteger acquires = new AtomicInteger();
    final AtomicInteger releases = new AtomicInteger();
    final AtomicInteger releasesDone = new AtomicInteger();
    final AtomicInteger renewals = new AtomicInteger();
    final AtomicReference<Renewal> renewal = new AtomicReference<>(Renewal.OK);
    final AtomicReference<LossListener> lastListener = new AtomicReference<>();
    final CountDownLatch hang = new CountDownLatch(1);
    volatile Duration acquireDelay = Duration.ZERO;
    volatile String lossDuringAcquire;
    volatile boolean fenced = true;
    volatile boolean releaseBlocks;
    volatile Duration renewDelay = Duration.ZERO;
    /** The validity margin {@link #traits} give, as a fraction of the ttl (Redlock's clock drift allowance). */
    volatile double marginFraction;
    /** How many of the next grant requests fail, as an unreachable store would; each says which call it was. */
    final AtomicInteger acquireFailures = new AtomicInteger();
    /** Runs inside each release, before it blocks when {@link #releaseBlocks} says so. */
    volatile Runnable duringRelease = () -> { };
    /** Runs inside each grant request, after the engine sent it and before the answer comes back. */
    volatile Runnable duringAcquire = () -> { };
    private final String id;

    ScriptedBackend() {
        this("scripted");
    }

    ScriptedBackend(String id) {
        this.id = id;
    }

    @Override
    public String id() {
        return id;
    }

    @Override
    public BackendTraits traits() {
        BackendTraits traits = fenced ? BackendTraits.fenced()
                : BackendTraits.unfenced("the " + id + " backend issues no fencing tokens");
        return traits.withValidityMargin(marginFraction, Duration.ZERO);
    }

    @Override
    public Optional<Grant> tryAcquire(GrantRequest request) throws InterruptedException {
        int call = acquires.incrementAndGet();
        duringAcquire.run();
        if (acquireFailures.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            throw new IllegalStateException("store unreachable (grant request " + call + ")");
        }
        if (!acquireDelay.isZero()) {
            Thread.sleep(acquireDelay.toMillis());
        }
        lastListener.set(request.onLoss());
        if (lossDuringAcquire != null) {
            request.onLoss().leaseLost(lossDuringAcquire);
        }
        long token = tokens.incrementAndGet();
        return Optional.of(new ScriptedGrant(request.name(), fenced ? OptionalLong.of(token) : OptionalLong.empty()));
    }

    @Override
    public boolean renew(Grant grant) throws Exception {
        renewals.incrementAndGet();
        if (!renewDelay.isZero()) {
            Thread.sleep(renewDelay.toMillis());
        }
        return switch (renewal.get()) {
            case OK -> true;
            case REFUSE -> false;
            case FAIL -> throw new IllegalStateException("store unreachable");
            case HANG -> {
                hang.await();
                yield true;
            }
        };
    }

    @Override
    public void release(Grant grant) throws InterruptedException {
        releases.incrementAndGet();
        duringRelease.run();
        if (releaseBlocks) {
            hang.await();
        }
        releasesDone.incrementAndGet();
    }

    record ScriptedGrant(String name, OptionalLong token) implements Grant {
    }
}
