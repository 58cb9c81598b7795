package dev.lease.autoconfigure;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.SmartLifecycle;

import dev.lease.core.LeaseEngine;

/**
 * Releases the leases kept after their work by {@code holdAtLeast} as the application context stops, before it
 * closes the engine: by then the stores' clients may have stopped (Lettuce's connection factory is a lifecycle bean of
 * an earlier phase), and a release that cannot be sent leaves the name busy for its whole ttl. Stops with the
 * default phase, so before those clients; a context started again holds leases over again.
 */
final class HeldOverLeases implements SmartLifecycle {

    private final ObjectProvider<LeaseEngine> engine;
    private volatile boolean running;

    HeldOverLeases(ObjectProvider<LeaseEngine> engine) {
        this.engine = engine;
    }

    @Override
    public void start() {
        running = true;
        engine.ifUnique(LeaseEngine::resumeHoldingOver);
    }

    @Override
    public void stop() {
        running = false;
        engine.ifUnique(LeaseEngine::stopHoldingOver);
    }

    @Override
    public boolean isRunning() {
        return running;
    }
}
