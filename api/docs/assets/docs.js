// Filters the endpoint list as the reader types; the page is fully usable without it.
document.getElementById('filter').addEventListener('input', (e) => {
  const q = e.target.value.trim().toLowerCase();
  for (const op of document.querySelectorAll('.op')) {
    op.classList.toggle('hidden', q !== '' && !op.dataset.search.includes(q));
  }
});
