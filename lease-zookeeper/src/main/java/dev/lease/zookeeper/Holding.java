package dev.lease.zookeeper;

import java.util.concurrent.atomic.AtomicReference;

import org.apache.zookeeper.Watcher;

import dev.lease.spi.LossListener;

/**
 * What the backend knows of a live grant: who to tell of its loss, whether a watch on its holder is set, and whether
 * it was lost (the first reason wins, and the listener hears it once).
 */
final class Holding {

    private final LossListener listener;
    private final AtomicReference<String> lostBecause = new AtomicReference<>();
    /** Whether the first renewal's watch on the holder is set and found the holder to be this grant's. */
    volatile boolean armed;
    /** The watch set on its holder by the first renewal, if any. */
    volatile Watcher watcher;

    Holding(LossListener listener) {
        this.listener = listener;
    }

    LossListener listener() {
        return listener;
    }

    boolean lost() {
        return lostBecause.get() != null;
    }

    /** Marks the grant lost; true when it was not lost before, and the caller must then tell the listener. */
    boolean lose(String reason) {
        return lostBecause.compareAndSet(null, reason);
    }

    void markLost(String reason) {
        if (lose(reason)) {
            listener.leaseLost(reason);
        }
    }
}
