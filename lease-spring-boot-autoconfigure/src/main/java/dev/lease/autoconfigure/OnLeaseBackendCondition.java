package dev.lease.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import org.springframework.boot.autoconfigure.condition.ConditionMessage;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/** The condition of {@link ConditionalOnLeaseBackend}. */
class OnLeaseBackendCondition extends SpringBootCondition {

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        BackendType type = (BackendType) metadata.getAnnotationAttributes(ConditionalOnLeaseBackend.class.getName())
                .get("value");
        ConditionMessage.Builder message = ConditionMessage.forCondition(ConditionalOnLeaseBackend.class, type.id);
        Binder binder = Binder.get(context.getEnvironment());
        List<String> named = new ArrayList<>();
        for (String property : BackendType.PROPERTIES) {
            String value = binder.bind(property, String.class).map(String::trim).orElse("");
            if (value.equalsIgnoreCase(type.id)) {
                return ConditionOutcome.match(message.found("property").items(property + "=" + value));
            }
            if (!value.isEmpty()) {
                named.add(property + "=" + value);
            }
        }
        if (!named.isEmpty()) {
            return ConditionOutcome.noMatch(message.because("the lease.*backend properties name other backends: "
                    + String.join(", ", named)));
        }
        return type.onlyWhenNamed
                ? ConditionOutcome.noMatch(message.because("no lease.*backend property names it"))
                : ConditionOutcome.match(message.because("no lease.*backend property is set"));
    }
}
