package dev.lease.autoconfigure;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotatedTypeMetadata;

/** Matches when {@code lease.backend}, {@code lease.correctness-backend} or {@code lease.efficiency-backend} names a backend. */
abstract class OnBackendNamedCondition extends SpringBootCondition {

    private static final String[] PROPERTIES = {"lease.backend", "lease.correctness-backend", "lease.efficiency-backend"};

    private final String id;

    OnBackendNamedCondition(String id) {
        this.id = id;
    }

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        Environment env = context.getEnvironment();
        for (String property : PROPERTIES) {
            String value = env.getProperty(property);
            if (value != null && value.trim().equalsIgnoreCase(id)) {
                return ConditionOutcome.match(property + "=" + value);
            }
        }
        return ConditionOutcome.noMatch("no lease.*backend property names " + id);
    }

    static final class InMemory extends OnBackendNamedCondition {
        InMemory() {
            super("in-memory");
        }
    }
}
