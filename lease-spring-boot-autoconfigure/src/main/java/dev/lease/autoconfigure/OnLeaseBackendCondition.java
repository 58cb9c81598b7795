package dev.lease.autoconfigure;

import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

import org.springframework.boot.autoconfigure.condition.ConditionMessage;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/** The condition of {@link ConditionalOnLeaseBackend}. */
class OnLeaseBackendCondition extends SpringBootCondition {

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        BackendType type = (BackendType) metadata.getAnnotationAttributes(ConditionalOnLeaseBackend.class.getName())
                .get("value");
        ConditionMessage.Builder message = ConditionMessage.forCondition(ConditionalOnLeaseBackend.class, type.id);
        Map<String, String> named = BackendType.named(context.getEnvironment());
        Optional<String> naming = type.namedIn(named);
        if (naming.isPresent()) {
            return ConditionOutcome.match(message.found("property").items(naming.get()));
        }
        if (!named.isEmpty()) {
            return ConditionOutcome.noMatch(message.because("the lease.*backend properties name other backends: "
                    + named.entrySet().stream().map(entry -> entry.getKey() + "=" + entry.getValue())
                            .collect(Collectors.joining(", "))));
        }
        return type.onlyWhenNamed
                ? ConditionOutcome.noMatch(message.because("no lease.*backend property names it"))
                : ConditionOutcome.match(message.because("no lease.*backend property is set"));
    }
}
