package dev.lease.core;

import java.util.List;
import java.util.OptionalLong;
import java.util.function.Consumer;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/** The engine's listeners as one, each call guarded: a failing metrics binding must not fail a lease. */
final class Listeners implements LeaseEngineListener {

    private static final Log log = LogFactory.getLog(Listeners.class);

    private final List<LeaseEngineListener> listeners;

    Listeners(List<? extends LeaseEngineListener> listeners) {
        this.listeners = List.copyOf(listeners);
    }

    @Override
    public Acquisition acquiring(LeaseDescription lease) {
        if (listeners.isEmpty()) {
            return Acquisition.IGNORED;
        }
        List<Acquisition> acquisitions = listeners.stream()
                .map(listener -> guarded(lease, "acquiring", () -> listener.acquiring(lease), Acquisition.IGNORED))
                .toList();
        return new Acquisition() {
            @Override
            public Runnable granted(OptionalLong token) {
                return whenClosed(lease, acquisitions.stream()
                        .map(acquisition -> guarded(lease, "granted", () -> acquisition.granted(token), () -> { }))
                        .toList());
            }

            @Override
            public void busy() {
                each(acquisitions, lease, "busy", Acquisition::busy);
            }

            @Override
            public void failed(Throwable error) {
                each(acquisitions, lease, "failed", acquisition -> acquisition.failed(error));
            }
        };
    }

    @Override
    public Campaign campaigning(LeaseDescription election) {
        if (listeners.isEmpty()) {
            return Campaign.IGNORED;
        }
        List<Campaign> campaigns = listeners.stream()
                .map(listener -> guarded(election, "campaigning", () -> listener.campaigning(election),
                        Campaign.IGNORED))
                .toList();
        return new Campaign() {
            @Override
            public Runnable won(OptionalLong token) {
                return whenClosed(election, campaigns.stream()
                        .map(campaign -> guarded(election, "won", () -> campaign.won(token), () -> { }))
                        .toList());
            }

            @Override
            public void stopped() {
                each(campaigns, election, "stopped", Campaign::stopped);
            }
        };
    }

    @Override
    public void renewed(LeaseDescription lease, boolean succeeded) {
        each(listeners, lease, "renewed", listener -> listener.renewed(lease, succeeded));
    }

    @Override
    public void lost(LeaseDescription lease, OptionalLong token, LossCause cause) {
        each(listeners, lease, "lost", listener -> listener.lost(lease, token, cause));
    }

    /** What each listener asked to run when the lease is closed, each guarded. */
    private static Runnable whenClosed(LeaseDescription lease, List<Runnable> onClose) {
        return () -> each(onClose, lease, "closed", Runnable::run);
    }

    private static <T> void each(List<T> targets, LeaseDescription lease, String event, Consumer<T> call) {
        for (T target : targets) {
            guarded(lease, event, () -> {
                call.accept(target);
                return null;
            }, null);
        }
    }

    private static <T> T guarded(LeaseDescription lease, String event, Supplier<T> call,
            T otherwise) {
        try {
            T result = call.get();
            return result != null ? result : otherwise;
        }
        catch (RuntimeException ex) {
            log.debug("A lease listener failed on '" + event + "' of lease '" + lease.name() + "'; ignored", ex);
            return otherwise;
        }
    }
}
