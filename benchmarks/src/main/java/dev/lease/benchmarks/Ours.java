package dev.lease.benchmarks;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;

import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.autoconfigure.LeaseAutoConfiguration;
import dev.lease.core.BackendRouter;
import dev.lease.core.LeaseDefaults;
import dev.lease.core.LeaseEngine;
import dev.lease.spi.Grant;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;

/** Our library over one backend: the engine (LeaseTemplate) and a Spring context with an {@code @Leased} bean. */
final class Ours implements AutoCloseable {

    static final Duration TTL = Duration.ofSeconds(10);

    final LeaseBackend<?> backend;
    final LeaseKind kind;
    final LeaseEngine engine;
    private AnnotationConfigApplicationContext context;

    Ours(LeaseBackend<?> backend) {
        this.backend = backend;
        this.kind = backend.traits().issuesFencingTokens() ? LeaseKind.CORRECTNESS : LeaseKind.EFFICIENCY;
        this.engine = new LeaseEngine(BackendRouter.of(Map.of(LeaseKind.CORRECTNESS, backend, LeaseKind.EFFICIENCY, backend)),
                new LeaseDefaults(TTL, null));
    }

    LeaseSpec spec(String key) {
        return spec(key, backend);
    }

    /** A lease of the kind {@code backend} may serve, with our ttl and a 30 s wait. */
    static LeaseSpec spec(String key, LeaseBackend<?> backend) {
        return LeaseSpec.of(key, backend.traits().issuesFencingTokens() ? LeaseKind.CORRECTNESS : LeaseKind.EFFICIENCY)
                .withTtl(TTL).withWaitFor(Duration.ofSeconds(30));
    }

    /** {@code LeaseTemplate.acquire} and {@code Lease.close}. */
    Locker template() {
        return key -> engine.acquire(spec(key))::close;
    }

    /**
     * The backend driven directly, without the engine: one grant request, a wait for a release when busy, the
     * release. What the store and the backend cost, so that a row of it tells the engine's share from theirs.
     */
    Locker backendAlone() {
        return key -> alone(backend, key);
    }

    private static <G extends Grant> Locker.Held alone(LeaseBackend<G> backend, String key) throws Exception {
        while (true) {
            Optional<G> grant = backend.tryAcquire(new GrantRequest(key, TTL, reason -> { }));
            if (grant.isPresent()) {
                G held = grant.get();
                return () -> backend.release(held);
            }
            backend.awaitRelease(key, Duration.ofSeconds(1));
        }
    }

    /** A call of an {@code @Leased} method, which acquires before and releases after the (empty) body. */
    Runnable leased(String key) {
        if (context == null) {
            context = new AnnotationConfigApplicationContext();
            context.registerBean(LeaseBackend.class, () -> backend);
            context.register(LeaseAutoConfiguration.class);
            Class<?> type = backend.traits().issuesFencingTokens() ? LeasedService.Fenced.class : LeasedService.Efficiency.class;
            context.registerBeanDefinition("service", new RootBeanDefinition(type));
            context.refresh();
        }
        Object service = context.getBean("service");
        if (service instanceof LeasedService.Fenced fenced) {
            return () -> fenced.work(key);
        }
        LeasedService.Efficiency efficiency = (LeasedService.Efficiency) service;
        return () -> efficiency.work(key);
    }

    @Override
    public void close() throws Exception {
        if (context != null) {
            context.close();
        }
        engine.close();
        if (backend instanceof AutoCloseable closeable) {
            closeable.close();
        }
    }
}
