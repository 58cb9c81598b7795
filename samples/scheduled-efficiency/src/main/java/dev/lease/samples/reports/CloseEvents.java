package dev.lease.samples.reports;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.stereotype.Component;

import dev.lease.aop.OnceListener;

/** Publishes each {@code @Once} outcome as a {@link CloseEvent}: the starter tells every OnceListener bean. */
@Component
class CloseEvents implements OnceListener {

    private final ApplicationEventPublisher events;
    private final String instance;

    CloseEvents(ApplicationEventPublisher events, @Value("${reports.instance}") String instance) {
        this.events = events;
        this.instance = instance;
    }

    @Override
    public void completed(String declaredKey, String key, boolean ran) {
        events.publishEvent(new CloseEvent(instance, key, ran));
    }
}
