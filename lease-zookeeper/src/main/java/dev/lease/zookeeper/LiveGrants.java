package dev.lease.zookeeper;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import java.util.function.LongPredicate;

import dev.lease.spi.LossListener;

/** The grants this backend holds now, each with its {@link Holding}: what renewal, loss and release act on. */
final class LiveGrants {

    private final Map<ZkGrant, Holding> live = new ConcurrentHashMap<>();

    Holding register(ZkGrant grant, LossListener onLoss) {
        Holding holding = new Holding(onLoss);
        live.put(grant, holding);
        return holding;
    }

    /** The grant's holding, or null once it was released. */
    Holding get(ZkGrant grant) {
        return live.get(grant);
    }

    /** Removes the grant; returns its holding, or null when it was not live here. */
    Holding remove(ZkGrant grant) {
        return live.remove(grant);
    }

    /** Whether a grant of {@code name} is live here. */
    boolean holds(String name) {
        return live.keySet().stream().anyMatch(g -> g.name().equals(name));
    }

    /** Whether a live grant of {@code name} created the holder with the creation zxid asked about. */
    LongPredicate claimsOf(String name) {
        return czxid -> live.keySet().stream().anyMatch(g -> g.name().equals(name) && g.zxid() == czxid);
    }

    int size() {
        return live.size();
    }

    boolean isEmpty() {
        return live.isEmpty();
    }

    /** Reports every live grant lost, each to its own listener, once. */
    void loseAll(String reason) {
        live.values().forEach(holding -> holding.markLost(reason));
    }

    void forEach(BiConsumer<ZkGrant, Holding> action) {
        live.forEach(action);
    }
}
