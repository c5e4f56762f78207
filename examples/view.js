// What the page shows. Every value from the gateway goes in as text (textContent), never as HTML.

const $ = (selector) => document.querySelector(selector);

function element(tag, text, attributes = {}) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  return node;
}

export function say(message) {
  $('#notice').textContent = message;
}

export function showError(message) {
  const box = $('#error');
  box.textContent = message;
  box.hidden = message === '';
}

export function setLive(text) {
  $('#live').textContent = `Live updates: ${text}`;
}

export function showSessionForm(shown) {
  $('#session').hidden = !shown;
}

export function showClient(client) {
  $('#client').hidden = false;
  $('#client-name').textContent = `${client.firstName} ${client.lastName}`;
  $('#credits').textContent = `Credits: ${client.credits.balance}`;
}

export function showBookings(bookings) {
  $('#bookings').hidden = false;
  $('#no-bookings').hidden = bookings.length > 0;
  $('#booking-rows').replaceChildren(
    ...bookings.map((booking) => {
      const row = element('tr', undefined, { 'data-booking-id': booking.id });
      row.append(
        element('td', booking.status, { 'data-field': 'status' }),
        element('td', booking.serviceName ?? booking.type),
        element('td', booking.provider?.name ?? ''),
        element('td', `${booking.date} ${booking.time}${booking.provider ? ` (${booking.provider.timezone})` : ''}`),
      );
      return row;
    }),
  );
}

/** Shows a booking's new status; false when the booking is not on the page (a new one: reload the list). */
export function setBookingStatus(bookingId, status) {
  const cell = document.querySelector(`tr[data-booking-id="${CSS.escape(bookingId)}"] [data-field="status"]`);
  if (cell === null) return false;
  cell.textContent = status;
  return true;
}

/**
 * The classes with their upcoming instances, each with a Book button calling `book(instance, button)`;
 * an instance in `booked` (the client's) or with no spot left has it disabled. `book` null (a
 * session without the book scope): no buttons, and a line saying why.
 */
export function showClasses(classes, booked, book, order) {
  const items = classes
    .map((cls) => ({ cls, instances: cls.instances.edges.map((e) => e.node).filter((i) => i.status === 'SCHEDULED') }))
    .filter(({ instances }) => instances.length > 0)
    .map(({ cls, instances }) => {
      const item = element('li');
      const heading = element('h3', cls.name);
      item.append(heading, element('p', `${cls.provider.name}, ${cls.provider.city ?? ''}`.replace(/, $/, '')));
      const list = element('ul');
      for (const instance of instances) {
        const when = `${instance.date} ${instance.time} (${cls.provider.timezone})`;
        const line = element('li', `${when}: ${instance.spotsRemaining} of ${instance.capacity} spots left `);
        const mine = booked.has(instance.id);
        if (book === null) {
          list.append(line);
          continue;
        }
        const button = element('button', mine ? 'Booked' : 'Book', {
          type: 'button',
          'data-instance-id': instance.id,
          'aria-label': `Book ${cls.name} on ${when}`,
        });
        button.disabled = mine || instance.spotsRemaining === 0;
        button.addEventListener('click', () => book(instance, button));
        line.append(button);
        list.append(line);
      }
      item.append(list);
      return item;
    });
  $('#classes').hidden = false;
  $('#classes-order').textContent = order;
  $('#read-only').hidden = book !== null;
  $('#no-classes').hidden = items.length > 0;
  $('#class-list').replaceChildren(...items);
}
